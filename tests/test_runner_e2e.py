"""``evidence-runner certify`` end to end on real git repositories made in temp dirs.

Each test names the threat or the user mistake it covers. Bad input is one line on stderr and
exit 2; the user's working tree is never touched; the baseline suite runs once per B.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import jsonschema
import pytest
from conftest import FIX, NUMBERED_CASES_CONFTEST, PKG, SHARED_IDS_CONFTEST, Record, Repo, certify, interrupt

from pytest_evidence import overlay
from runner import compiled, netns
from runner.checkout import checkouts
from runner.cli import main
from runner.target import Target


def test_patch_file_is_applied_onto_b(repo: Repo, tmp_path: pathlib.Path, schema: Record) -> None:
    base = repo.commit(PKG)
    fixed = repo.commit(FIX)
    patch = tmp_path / "fix.patch"
    patch.write_text(repo.git("diff", base, fixed) + "\n")
    repo.git("checkout", "-q", base)
    code, doc = certify(
        repo, tmp_path / "e.json", "--baseline", base, "--patch", str(patch), "--pytest-arg=-o", "--pytest-arg=addopts="
    )
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED"
    assert doc["invocation"]["pytest_args"] == ["-o", "addopts="]
    assert doc["baseline_commit"] == base and doc["candidate_commit"] != base


def test_users_working_tree_index_and_worktrees_are_untouched(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    repo.git("checkout", "-q", base)
    (repo.path / "calc" / "ops.py").write_text("# the user's uncommitted edit\n")
    (repo.path / "scratch.txt").write_text("untracked\n")
    repo.git("add", "scratch.txt")
    before = (repo.git("status", "--porcelain"), repo.git("worktree", "list"), repo.git("rev-parse", "HEAD"))
    code, _ = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert code == 0
    assert (repo.git("status", "--porcelain"), repo.git("worktree", "list"), repo.git("rev-parse", "HEAD")) == before
    assert (repo.path / "calc" / "ops.py").read_text() == "# the user's uncommitted edit\n"


def test_b_with_c_tests_made_ahead_is_the_tree_made_on_demand(repo: Repo) -> None:
    """``lay_over_b_ahead`` makes, in a thread, the tree ``baseline_with_tests`` would: B's
    source, C's test files, one neutral commit and a clean status; asked for, it is that tree;
    never asked for (a climb that halts first), it is removed with the others."""
    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    trees = []
    for ask in (True, False):
        with checkouts(repo.path, base, cand, None) as co:
            plan = overlay.plan(str(co.c_dir), co.baseline, [])
            co.lay_over_b_ahead(plan)
            if not ask:
                continue
            tree = co.baseline_with_tests(plan)
            assert co.baseline_with_tests(plan) == tree and co.side(tree) == "B"
            assert (tree / "calc/ops.py").read_text() == PKG["calc/ops.py"]  # B's source
            assert (tree / "tests/test_half.py").read_text() == FIX["tests/test_half.py"]  # C's test
            status = subprocess.run(["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True)
            assert status.stdout == ""
            trees.append(tree)
        assert not trees[0].exists()
    assert repo.git("worktree", "list").count("\n") == 0  # only the main worktree remains


def test_many_candidates_against_one_b_run_the_b_suite_once(repo: Repo, tmp_path: pathlib.Path) -> None:
    log = tmp_path / "runs.log"
    # Nothing in its path tells a test its side: the code under test does (each candidate's
    # calc/ops.py carries a "# candidate" line).
    counted = (
        f"import pathlib\n\n\ndef test_counted():\n    with open({str(log)!r}, 'a') as fh:\n"
        "        ops = (pathlib.Path(__file__).parents[1] / 'calc' / 'ops.py').read_text()\n"
        "        fh.write(('C' if '# candidate' in ops else 'B') + '\\n')\n"
    )
    base = repo.commit({**PKG, "tests/test_counted.py": counted})
    candidates = []
    for i in range(4):
        repo.git("checkout", "-q", base)
        fix = dict(FIX)
        fix["calc/ops.py"] = fix["calc/ops.py"] + "\n# candidate %d\n" % i
        candidates.append(repo.commit(fix, "candidate %d" % i))
    for i, cand in enumerate(candidates):
        code, doc = certify(repo, tmp_path / f"e{i}.json", "--baseline", base, "--candidate", cand)
        assert code == 0 and doc is not None and doc["verdict"]["verdict"] == "CERTIFIED"
    sides = log.read_text().split()
    assert sides.count("B") == 1, sides  # the baseline suite, once for all four
    assert sides.count("C") == 4  # test_counted runs on every candidate (T5 or T7)


def test_test_module_importing_a_new_api_errors_on_b_without_aborting(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(PKG)
    cand = repo.commit(
        {
            "calc/ops.py": PKG["calc/ops.py"] + "\n\ndef triple(n):\n    return n * 3\n",
            "tests/test_triple.py": "from calc.ops import triple\n\n\ndef test_triple():\n    assert triple(2) == 6\n",
        }
    )
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    res = next(r for r in doc["results"] if r["test_id"] == "tests/test_triple.py::test_triple")
    assert (res["baseline_result"], res["candidate_result"], res["bug_discriminating"]) == ("error", "pass", True)
    failure = doc["annotations"]["tests/test_triple.py::test_triple"]["baseline_failure"]
    assert failure["kind"] == "collection_error" and "triple" in failure["message"]
    assert code == 0


def test_a_hanging_reproducer_is_a_timeout_and_rejected(repo: Repo, tmp_path: pathlib.Path) -> None:
    """pytest-timeout stops the test (outcome ``timeout``, not ``fail``); the process lives on."""
    base = repo.commit(PKG)
    cand = repo.commit(
        {
            "calc/ops.py": PKG["calc/ops.py"].replace("return n // 2 + 1", "while True:\n        pass"),
            "tests/test_half.py": FIX["tests/test_half.py"],
        }
    )
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--test-timeout", "2")
    assert doc is not None and code == 1
    res = next(r for r in doc["results"] if r["test_id"] == "tests/test_half.py::test_half")
    assert res["candidate_result"] == "timeout" and res["failure"]["kind"] == "timeout"
    assert "pytest-timeout" in res["failure"]["message"]
    assert doc["pinning"]["test_timeout"] == 2 and doc["pinning"]["plugins"]["pytest-timeout"].startswith("installed")
    assert doc["verdict"]["halted_at"] == "T3"
    assert "timeout" in doc["summary"]["detections"]


#: What ``drain`` does on B after logging its call, by case: loop until the per-test timeout
#: ends it; loop in its first call only; end at once, the test then failing with a message that
#: says "timeout" (its own words, not a wait).
ON_B = {
    "hangs": "    while True:\n        pass\n",
    "hangs-once": "    if open(%(log)r).read().count('B') == 1:\n        while True:\n            pass\n",
    "says-so": "    return 'Timeout'\n",
}


@pytest.mark.parametrize(
    ("on_b", "half", "b_runs"),
    [("hangs", True, 1), ("hangs", False, 1), ("hangs-once", True, 1), ("says-so", True, 3)],
    ids=["beside-a-reproducer", "alone", "hangs-in-the-first-run-only", "no-wait"],
)
def test_a_new_test_that_hangs_on_b_waits_out_its_timeout_there_once(
    repo: Repo, tmp_path: pathlib.Path, on_b: str, half: bool, b_runs: int
) -> None:
    """A fix of a hang: its new test times out on B and passes on C. A timeout is no failure,
    so that test proves nothing -- ``test_half``, where the candidate adds it, proves the fix --
    and B's stability runs leave it out rather than wait for the timeout twice more: alone, B
    has no further run; a hang in B's first run only is not looked for (a flake of B's, which
    made T3 inconclusive when B's runs repeated it). A test that fails saying "Timeout" without
    waiting is repeated on B as any other. C's runs repeat it as any other."""
    log = tmp_path / "drains.log"
    drain = "\n\ndef drain():\n    with open(%r, 'a') as fh:\n        fh.write('%s\\n')\n"
    base = repo.commit(
        {**PKG, "calc/ops.py": PKG["calc/ops.py"] + drain % (str(log), "B") + ON_B[on_b] % {"log": str(log)}}
    )
    test_drain = (
        "import pytest\n\nfrom calc.ops import drain\n\n\ndef test_drain():\n"
        "    if drain() == 'Timeout':\n        pytest.fail('Timeout >2.0s')\n"
    )
    cand = repo.commit(
        {
            **(FIX if half else {}),
            "calc/ops.py": FIX["calc/ops.py"] + drain % (str(log), "C"),
            "tests/test_drain.py": test_drain,
        }
    )
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--test-timeout", "2")
    assert doc is not None
    if half:
        assert doc["verdict"]["verdict"] == "CERTIFIED" and code == 0
    else:
        t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
        assert (t3["status"], t3["note"]) == (
            "inconclusive",
            "no reproducer fails on B: nothing shows the bug fixed; 1 timed out on B, which is no failure: "
            "add one that fails on B within its time",
        )
    by_id = {r["test_id"]: r for r in doc["results"]}
    hung = by_id["tests/test_drain.py::test_drain"]
    assert (hung["baseline_result"], hung["candidate_result"], hung["bug_discriminating"]) == ("timeout", "pass", False)
    assert not half or by_id["tests/test_half.py::test_half"]["bug_discriminating"]
    sides = log.read_text().split()
    assert sides.count("B") == b_runs  # 1: T3's first run on B only
    assert sides.count("C") == 3  # C's first run and its two further runs


def test_changed_module_imported_from_outside_the_checkout_blocks_certification(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = {("src/" + k if k.startswith("calc") else k): v for k, v in PKG.items()}
    base = repo.commit(src)
    fix = {("src/" + k if k.startswith("calc") else k): v for k, v in FIX.items()}
    cand = repo.commit(fix)
    elsewhere = tmp_path / "site"
    (elsewhere / "calc").mkdir(parents=True)
    (elsewhere / "calc" / "__init__.py").write_text("")
    (elsewhere / "calc" / "ops.py").write_text(fix["src/calc/ops.py"])  # a stale "installed" copy
    monkeypatch.setenv("PYTHONPATH", str(elsewhere))
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--pythonpath", "tests")
    assert doc is not None
    outside = [d for d in doc["detections"] if d["kind"] == "import_outside_checkout"]
    assert outside and str(elsewhere) in outside[0]["message"]
    assert doc["verdict"]["verdict"] != "CERTIFIED" and code == 3


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("not-a-repo", "not inside a git repository"),
        ("no-such-dir", "no-such-dir is not a directory"),
        ("unknown-tests-from", "--tests-from nope: neither a patch file nor a revision"),
        ("unknown-pytest-option", "unrecognized arguments: --no-such-option"),
        ("pytest-option-after-dashes", "unrecognized arguments: --no-such-option"),
        ("pytest-plugin-missing", 'Error importing plugin "no_such_plugin_xyz"'),
        ("unknown-rev", "unknown revision 'nope'"),
        ("bad-patch", "does not apply to the baseline: patch failed: calc/ops.py:1"),
        ("unknown-test", "no collected test matches tests/test_ops.py::test_nope"),
        ("missing-python", "no such interpreter"),
        ("python-is-a-venv", "is a directory: give its interpreter, bin/python"),
        ("not-python", "--python /bin/true is not a Python that can run the plugin"),
        ("python-says-json", "answered the probe with something it does not say (KeyError: 'pytest')"),
        ("corrupt-store", "is corrupt"),
        ("pythonpath-nowhere", "--pythonpath lib is a directory in neither the baseline nor the candidate"),
        ("patch-is-directory", "a directory, not a patch file"),
        ("out-is-directory", "is a directory, not a file"),
        ("out-missing-parent", "does not exist"),
        ("out-under-proc", "cannot be written"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], case: str, needle: str
) -> None:
    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    args = ["--baseline", base, "--candidate", cand]
    target = repo.path
    if case == "not-a-repo":
        target = tmp_path / "plain"
        target.mkdir()
    elif case == "no-such-dir":
        target = tmp_path / "no-such-dir"
    elif case == "unknown-tests-from":
        args += ["--tests-from", "nope"]
    elif case == "unknown-pytest-option":
        args += ["--pytest-arg=--no-such-option"]
    elif case == "pytest-option-after-dashes":
        args += ["--", "-o", "addopts=", "--no-such-option"]
    elif case == "pytest-plugin-missing":
        args += ["--", "-p", "no_such_plugin_xyz"]
    elif case == "unknown-rev":
        args[1] = "nope"
    elif case == "bad-patch":
        patch = tmp_path / "p.patch"
        patch.write_text(
            "--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1,2 +1,2 @@\n-def nothing_like_this():\n+def x():\n     pass\n"
        )
        args[2:] = ["--patch", str(patch)]
    elif case == "unknown-test":
        args += ["--reproducer", "tests/test_ops.py::test_nope"]
    elif case == "missing-python":
        args += ["--python", str(tmp_path / "no-such-python")]
    elif case == "python-is-a-venv":  # the venv named, not its interpreter (an independent check)
        (tmp_path / "venv" / "bin").mkdir(parents=True)
        (tmp_path / "venv" / "bin" / "python").symlink_to(sys.executable)
        args += ["--python", str(tmp_path / "venv")]
    elif case == "not-python":
        args += ["--python", "/bin/true"]
    elif case == "python-says-json":  # an interpreter whose last word is JSON, not the probe's answer
        says = tmp_path / "python"
        says.write_text("#!/bin/sh\necho '{}'\n")
        says.chmod(0o755)
        args += ["--python", str(says)]
    elif case == "corrupt-store":
        bad = tmp_path / "store.sqlite3"
        bad.write_bytes(b"garbage" * 1000)
        args += ["--store", str(bad)]
    elif case == "pythonpath-nowhere":
        args += ["--pythonpath", "lib"]
    elif case == "patch-is-directory":
        args[2:] = ["--patch", str(tmp_path)]
    out = {
        "out-is-directory": tmp_path,
        "out-missing-parent": tmp_path / "no" / "such" / "e.json",
        "out-under-proc": pathlib.Path("/proc/evidence.json"),
    }.get(case, tmp_path / "e.json")
    code = main(["certify", "--repo", str(target), "--out", str(out), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    # Found before any tier, or beside the first ones (the pytest arguments): the one line said.
    # A reproducer is looked for once the suite is collected, after the tiers before it.
    assert len(err) == 1 or case == "unknown-test", err
    errors = [line for line in err if line.startswith("evidence-runner: ")]  # the rest is tier progress
    assert errors == [err[-1]] and needle in err[-1] and "Traceback" not in "\n".join(err)
    assert err[-1].count("[") == 1 and err[-1].endswith("]")  # one slug
    assert not (tmp_path / "e.json").exists() and not list(tmp_path.glob(".*.tmp"))
    assert repo.git("worktree", "list").count("\n") == 0


@pytest.mark.parametrize("beside", ["unknown-rev", "syntax-error"])
def test_an_interpreter_that_cannot_run_the_plugin_is_said_first_though_probed_meanwhile(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], beside: str
) -> None:
    """The target is probed in a thread beside the checkouts and the static tiers: its refusal
    still comes before another bad input, and before a record of a patch T0 rejects."""
    base = repo.commit(PKG)
    cand = repo.commit({"calc/ops.py": "def half(n:\n"}) if beside == "syntax-error" else repo.commit(FIX)
    args = ["--baseline", "nope" if beside == "unknown-rev" else base, "--candidate", cand, "--python", "/bin/true"]
    code = main(["certify", "--repo", str(repo.path), "--out", str(tmp_path / "e.json"), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--python /bin/true is not a Python that can run the plugin" in err[0]
    assert "unknown revision" not in "\n".join(err) and "Traceback" not in "\n".join(err)
    assert not (tmp_path / "e.json").exists()
    assert repo.git("worktree", "list").count("\n") == 0


def test_command_line_entry_point_and_usage_errors(tmp_path: pathlib.Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "runner.cli", "certify", "--repo", str(tmp_path)],
        capture_output=True,
        text=True,
        env=dict(os.environ, TMPDIR=tempfile.gettempdir()),
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "the following arguments are required: --baseline, --out" in lines[0] and lines[0].endswith("[usage]")


@pytest.mark.parametrize(
    ("layout", "importing"),
    [("flat", "from tests import OpsMixin"), ("src", "from . import OpsMixin")],
)
def test_inherited_test_methods_take_the_origin_of_their_changed_mixin(
    repo: Repo, tmp_path: pathlib.Path, layout: str, importing: str
) -> None:
    """The cachetools shape: test classes in unchanged files inherit tests from a changed mixin --
    also where the tests directory is no import root (a src layout: pytest puts the directory
    above the ``tests`` package on the path), and T3 collects only the files that may hold them."""
    mixin = (
        "class OpsMixin:\n    def test_double(self):\n        from calc.ops import double\n"
        "        assert double(2) == 4\n"
    )
    user = importing + "\n\n\nclass TestOps(OpsMixin):\n    pass\n"
    package = {k.replace("calc/", "src/calc/") if layout == "src" else k: v for k, v in PKG.items()}
    base = repo.commit({**package, "tests/__init__.py": mixin, "tests/test_cls.py": user})
    added = mixin + "\n    def test_half(self):\n        from calc.ops import half\n        assert half(4) == 2\n"
    ops = "src/calc/ops.py" if layout == "src" else "calc/ops.py"
    cand = repo.commit({ops: FIX["calc/ops.py"], "tests/__init__.py": added})
    roots = ("--pythonpath", "src") if layout == "src" else ()
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, *roots)
    assert doc is not None and code == 0, doc and doc["verdict"]
    res = next(r for r in doc["results"] if r["test_id"] == "tests/test_cls.py::TestOps::test_half")
    assert (res["role"], res["baseline_result"], res["candidate_result"], res["bug_discriminating"]) == (
        "BUG_REPRODUCTION",
        "fail",
        "pass",
        True,
    )
    assert doc["annotations"]["tests/test_cls.py::TestOps::test_double"]["origin"] == "unchanged"


def test_type_errors_the_baseline_already_had_do_not_halt(repo: Repo, tmp_path: pathlib.Path) -> None:
    typed = {
        **PKG,
        "pyproject.toml": PKG["pyproject.toml"] + "\n[tool.mypy]\n",
        "calc/ops.py": PKG["calc/ops.py"] + '\n\nLEGACY: int = "not an int"\n',
    }
    base = repo.commit(typed)
    cand = repo.commit(
        {
            "calc/ops.py": typed["calc/ops.py"].replace("n // 2 + 1", "n // 2"),
            "tests/test_half.py": FIX["tests/test_half.py"],
        }
    )
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and code == 0, doc and doc["verdict"]
    t2 = next(t for t in doc["tiers"] if t["tier"] == "T2")
    old = [f for f in t2["findings"] if f["check"] == "mypy"]
    assert old and not old[0]["hard"] and old[0]["message"].endswith("(also on the baseline)")


def _interrupted(
    repo: Repo, base: str, cand: str, tmp_path: pathlib.Path, started: pathlib.Path, signum: int
) -> tuple[int, str]:
    """Certify in a process of its own; send ``signum`` once ``started`` exists. Exit code, stderr."""

    args = ["--repo", str(repo.path), "--baseline", base, "--candidate", cand, "--out", str(tmp_path / "e.json")]
    cmd = [sys.executable, "-m", "runner.cli", "certify", *args, "--store", str(tmp_path / "store.sqlite3")]
    code, _, err = interrupt(cmd, started, signum)
    return code, err


def test_sigterm_removes_the_worktrees_kills_the_tests_and_records_what_ran(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    import signal

    marker = tmp_path / "started"
    slow = (
        f"import pathlib, time\n\n\ndef test_slow():\n    pathlib.Path({str(marker)!r}).touch()\n    time.sleep(60)\n"
    )
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, "tests/test_slow.py": slow})
    code, err = _interrupted(repo, base, cand, tmp_path, marker, signal.SIGTERM)
    assert code == 4 and "interrupted; temporary worktrees removed" in err
    assert err.strip().splitlines()[-1].endswith("[interrupted]") and "Traceback" not in err
    assert repo.git("worktree", "list").count("\n") == 0
    doc = json.loads((tmp_path / "e.json").read_text())
    jsonschema.validate(doc, schema)
    assert (doc["complete"], doc["incomplete_reason"], doc["verdict"], doc["exit_status"]) == (
        False,
        "interrupted",
        None,
        4,
    )
    status = {t["tier"]: t["status"] for t in doc["tiers"]}
    assert [status[t] for t in ("T0", "T1", "T2", "T3")] == ["passed", "passed", "passed", "not_run"]


#: A table of cases checked case by case with ``self.subTest``, as data-driven suites do.
SUBTESTS = """import unittest

from calc.ops import double


class TestTable(unittest.TestCase):
    def test_table(self):
        for n, want in [(1, 2), (3, 6), (5, 10)]:
            with self.subTest(n=n):
                self.assertEqual(double(n), want)
"""


def test_a_regression_only_a_subtest_sees_is_rejected(repo: Repo, tmp_path: pathlib.Path, schema: Record) -> None:
    """The fix of ``half`` breaks ``double(3)``, which only one case of a ``subTest`` loop
    checks. On pytest 9 the test's own report still said passed, and the candidate was
    CERTIFIED (an independent check on a real project's data test). The failed subtest fails
    the test: a regression at T4."""
    base = repo.commit({**PKG, "tests/test_table.py": SUBTESTS})
    broken = FIX["calc/ops.py"].replace("return n * 2", "return n * 2 if n != 3 else 0")
    cand = repo.commit({**FIX, "calc/ops.py": broken})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert code == 1 and doc["verdict"]["verdict"] == "REJECTED" and doc["verdict"]["halted_at"] == "T4", doc["verdict"]
    result = next(r for r in doc["results"] if r["test_id"] == "tests/test_table.py::TestTable::test_table")
    assert (result["baseline_result"], result["candidate_result"]) == ("pass", "fail")
    assert "0 != 6" in result["failure"]["message"], result["failure"]


DOUBLE = "__import__('calc.ops').ops.double(%d) == %d\n"


@pytest.mark.parametrize(
    ("cases", "broken"),
    [
        (DOUBLE % (3, 6) + DOUBLE % (1, 2), "tests/table.cases::case"),
        (DOUBLE % (1, 2) + DOUBLE % (3, 6), "tests/table.cases::case[#2]"),
        ("False\n" + DOUBLE % (3, 6), "tests/table.cases::case[#2]"),
    ],
    ids=["failing-first", "failing-last", "beside-a-case-failing-on-both-sides"],
)
def test_a_regression_only_one_of_the_items_sharing_an_id_sees_is_rejected(
    repo: Repo, tmp_path: pathlib.Path, schema: Record, cases: str, broken: str
) -> None:
    """An independent check (docopt-ng) certified a regression seen only by the first of two
    items sharing an id: the suite session ran the last item of the id alone, and a pass read
    last stood; folded into one result per id, a sibling failing on B hid it too (a review's
    probe). Each item has its own id now (``[#2]``): a regression at T4, named."""
    base = repo.commit({**PKG, "tests/conftest.py": SHARED_IDS_CONFTEST, "tests/table.cases": cases})
    cand = repo.commit(
        {**FIX, "calc/ops.py": FIX["calc/ops.py"].replace("return n * 2", "return n * 2 if n != 3 else 0")}
    )
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert code == 1 and doc["verdict"]["halted_at"] == "T4", doc["verdict"]
    assert doc["verdict"]["reasons"][0] == "T4: regression: %s passes on B, fails on C" % broken, doc["verdict"]


def test_a_reproducer_a_conftest_collects_from_a_data_file_is_run_and_judged(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """An independent check (docopt-ng): a fix whose test is a new case of a data file that a
    conftest collects, named with ``--reproducer`` as ``inconclusive.md`` advises, was told
    "none designated" -- the file, not a ``python_files`` match, was never collected -- and a
    misspelt name got the same. Now it runs on B and C; a name no collector makes is bad input,
    as for a test file, and so is one in a file the suite does not collect."""
    base = repo.commit({**PKG, "tests/conftest.py": NUMBERED_CASES_CONFTEST, "tests/table.cases": "True\n"})
    fixed = repo.commit(
        {"calc/ops.py": FIX["calc/ops.py"], "tests/table.cases": "True\n__import__('calc.ops').ops.half(4) == 2\n"}
    )
    args = ("--baseline", base, "--candidate", fixed, "--tests-from", fixed)
    code, doc = certify(repo, tmp_path / "e.json", *args, "--reproducer", "tests/table.cases::case2")
    assert doc is not None and (code, doc["verdict"]["verdict"]) == (0, "CERTIFIED"), doc and doc["verdict"]
    case = next(r for r in doc["results"] if r["test_id"] == "tests/table.cases::case2")
    assert (case["baseline_result"], case["candidate_result"], case["bug_discriminating"]) == ("fail", "pass", True)
    for wrong in ("tests/table.cases::case9", "elsewhere/table.cases::case2"):
        assert certify(repo, tmp_path / "x.json", *args, "--reproducer", wrong)[0] == 2


def test_a_reproducer_in_a_python_file_only_a_conftest_collects_is_run(repo: Repo, tmp_path: pathlib.Path) -> None:
    """A review's probe: ``check_*.py`` files a conftest collects as modules hold the suite's
    tests though ``python_files`` does not name them; a reproducer there was bad input."""
    collector = (
        "import pytest\n\n\ndef pytest_collect_file(file_path, parent):\n"
        "    if file_path.name.startswith('check_'):\n"
        "        return pytest.Module.from_parent(parent, path=file_path)\n"
    )
    base = repo.commit({**PKG, "tests/conftest.py": collector})
    check = FIX["tests/test_half.py"].replace("def test_half", "def test_check")
    fixed = repo.commit({"calc/ops.py": FIX["calc/ops.py"], "tests/check_half.py": check})
    args = ("--baseline", base, "--candidate", fixed, "--reproducer", "tests/check_half.py::test_check")
    code, doc = certify(repo, tmp_path / "e.json", *args)
    assert doc is not None and (code, doc["verdict"]["verdict"]) == (0, "CERTIFIED"), doc and doc["verdict"]


def test_a_fix_bringing_no_test_is_inconclusive_and_says_how_to_name_one(repo: Repo, tmp_path: pathlib.Path) -> None:
    """Nothing proves the fix: T3 says so, and how to name the test that should (an independent
    check: a fix whose test is a new data file read by an existing test was told only that the
    candidate added no test)."""
    base = repo.commit(PKG)
    cand = repo.commit({"calc/ops.py": FIX["calc/ops.py"]})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and code == 3 and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    assert t3["status"] == "inconclusive" and t3["note"].endswith("(name one with --reproducer NODEID)"), t3


def test_full_climbs_every_tier_after_a_failure(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(PKG)
    cand = repo.commit(
        {
            "calc/ops.py": FIX["calc/ops.py"].replace("return n * 2", "return n * 3"),
            "tests/test_half.py": FIX["tests/test_half.py"],
        }
    )
    code, halting = certify(repo, tmp_path / "a.json", "--baseline", base, "--candidate", cand)
    assert halting is not None and code == 1 and halting["verdict"]["halted_at"] == "T4"
    assert [t["status"] for t in halting["tiers"]][4:] == ["failed", "not_run", "not_run", "not_run"]
    code, full = certify(repo, tmp_path / "b.json", "--baseline", base, "--candidate", cand, "--full")
    assert full is not None and code == 1 and full["verdict"]["halted_at"] == "T4"
    assert "not_run" not in [t["status"] for t in full["tiers"]]
    assert full["invocation"]["full"] is True


ORDER_DEPENDENT = """import unittest

from calc.ops import double, half


class TestState(unittest.TestCase):
    def test_a_remember(self):
        TestState.seen = double(2)

    def test_b_use(self):
        half(4)
        self.assertEqual(TestState.seen, 4)  # set by test_a_remember: passes only after it
"""


def test_a_test_selected_with_the_tests_before_it_in_its_module_runs_in_their_order(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    """T4 selects test_b_use (it reaches the changed function), which passes only after
    test_a_remember. Run alone, it failed on both sides and was a suspected flip settled as
    order-dependent; T4's group now runs the test before it in its module first, as a plain run
    does: no flip, nothing to settle."""
    base = repo.commit({**PKG, "tests/test_state.py": ORDER_DEPENDENT})
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]
    tid = "tests/test_state.py::TestState::test_b_use"
    assert not [d for d in doc["detections"] if d["kind"] in ("order_dependent", "selection_gap")]
    assert doc["annotations"][tid]["flip"] is None
    result = next(r for r in doc["results"] if r["test_id"] == tid)
    assert (result["baseline_result"], result["candidate_result"]) == ("pass", "pass")
    t4 = next(t for t in doc["tiers"] if t["tier"] == "T4")
    assert (t4["status"], t4["selected"], t4["run"]) == ("passed", 1, 2)


#: test_b_poison (T4: it reaches half) leaves behind what fails test_a_check, of a module before
#: it in the suite's order (T5: it opened the changed table).
POISON = "import calc\nfrom calc.ops import half\n\n\ndef test_b_poison():\n    half(4)\n    calc.POISONED = True\n"
LEFT_BEHIND = {
    "tests/test_a_check.py": """import pathlib

import calc

TABLE = pathlib.Path(__file__).parent.parent / "calc" / "table.txt"


def test_a_check():
    TABLE.read_text()
    assert not getattr(calc, "POISONED", False)  # fails after test_b_poison
""",
    "tests/test_b_poison.py": POISON,
}


def _table_changed(repo: Repo, tmp_path: pathlib.Path, schema: Record, tests: dict[str, str]) -> tuple[int, Record]:
    """Certify the fix of ``half`` that also changes ``calc/table.txt``, under ``tests``; the
    record, validated against the schema."""
    base = repo.commit({**PKG, "calc/table.txt": "1\n", **tests})
    cand = repo.commit({**FIX, "calc/table.txt": "2\n"})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    return code, doc


def test_a_flip_left_behind_by_an_earlier_tier_of_the_session_is_order_dependent(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    """C's suite session runs T4's group (test_b_poison reaches the changed function) and then,
    in the same process, T5's (test_a_check opened the changed table): test_a_check fails after
    what test_b_poison left behind. B's confirmation runs the session's groups through T5's, as
    C did -- it used to run T5's group alone, where the test passes, and called the candidate's
    own code the cause (freezegun 1.5.5's real fix was REJECTED so: a test earlier in the
    session reloads the module whose class a test of T5's group compares)."""
    code, doc = _table_changed(repo, tmp_path, schema, LEFT_BEHIND)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]
    tid = "tests/test_a_check.py::test_a_check"
    assert [d["test_id"] for d in doc["detections"] if d["kind"] == "order_dependent"] == [tid]
    flip = doc["annotations"][tid]["flip"]
    assert (flip["baseline_full_suite"], flip["baseline_same_selection"], flip["selection_size"]) == ("pass", "fail", 1)
    runs = {t["tier"]: t["run"] for t in doc["tiers"]}
    assert (runs["T4"], runs["T5"]) == (1, 1)


BROKEN_BEHIND = {
    **LEFT_BEHIND,
    "tests/test_a_check.py": LEFT_BEHIND["tests/test_a_check.py"].replace(
        "    TABLE.read_text()\n", '    assert TABLE.read_text() == "1\\n"  # the candidate breaks it, in any order\n'
    ),
}


def test_an_order_dependent_flip_that_holds_apart_is_a_regression(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    """As above, test_a_check fails on B too after test_b_poison, in the session's order: the
    order alone would explain C's failure. But the candidate's table breaks it whatever the
    order: run on its own, each side collecting the whole suite, it passes on B and fails on C.
    It was CERTIFIED, the flip excused as ``order_dependent``."""
    code, doc = _table_changed(repo, tmp_path, schema, BROKEN_BEHIND)
    assert code == 1 and doc["verdict"]["verdict"] == "REJECTED", doc["verdict"]
    assert doc["verdict"]["halted_at"] == "T5"
    tid = "tests/test_a_check.py::test_a_check"
    assert "order_dependent" not in {d["kind"] for d in doc["detections"]}
    flip = doc["annotations"][tid]["flip"]
    assert (flip["baseline_full_suite"], flip["baseline_same_selection"]) == ("pass", "fail")
    assert flip["rests_on"].startswith("regression apart: fails on B too in the C run's selection")
    result = next(r for r in doc["results"] if r["test_id"] == tid)
    assert (result["baseline_result"], result["candidate_result"]) == ("pass", "fail")
    t5 = next(t for t in doc["tiers"] if t["tier"] == "T5")
    assert t5["status"] == "failed" and tid in t5["note"]


#: B's half is buggy but for 6, which ``test_use`` checks.
HALF_B = "def half(n):\n    if n == 6:\n        return 3\n    return n // 2 + 1\n\n\ndef double(n):\n    return n * 2\n"


#: test_b_use passes only after test_a_remember, and not after test_c_poison of a later module.
NEEDS_A_SIBLING_AND_NO_POISON = {
    "tests/test_b_use.py": """import pathlib

import calc

TABLE = pathlib.Path(__file__).parent.parent / "calc" / "table.txt"


def test_a_remember():
    calc.SEEN = True


def test_b_use():
    assert getattr(calc, "SEEN", False) and not getattr(calc, "POISONED", False)
    assert int(TABLE.read_text()) < 5
""",
    "tests/test_c_poison.py": POISON.replace("test_b_poison", "test_c_poison"),
}
#: The same, but test_b_use checks the table only once test_a_remember has run: on its own it
#: passes on both sides, checking nothing.
CHECKS_AFTER_A_SIBLING = {
    **NEEDS_A_SIBLING_AND_NO_POISON,
    "tests/test_b_use.py": NEEDS_A_SIBLING_AND_NO_POISON["tests/test_b_use.py"].replace(
        """    assert getattr(calc, "SEEN", False) and not getattr(calc, "POISONED", False)
    assert int(TABLE.read_text()) < 5
""",
        """    if getattr(calc, "SEEN", False):
        assert int(TABLE.read_text()) < 5
    assert not getattr(calc, "POISONED", False)
""",
    ),
}


#: The same, the test it checks after in an earlier module.
CHECKS_AFTER_AN_EARLIER_MODULE = {
    **CHECKS_AFTER_A_SIBLING,
    "tests/test_a_remember.py": "import calc\n\n\ndef test_a_remember():\n    calc.SEEN = True\n",
    "tests/test_b_use.py": CHECKS_AFTER_A_SIBLING["tests/test_b_use.py"].replace(
        "def test_a_remember():\n    calc.SEEN = True\n\n\n", ""
    ),
}


@pytest.mark.parametrize(
    ("tests", "alone"),
    [
        (NEEDS_A_SIBLING_AND_NO_POISON, "fail"),
        (CHECKS_AFTER_A_SIBLING, "pass"),
        (CHECKS_AFTER_AN_EARLIER_MODULE, "pass"),
    ],
    ids=["needs", "checks", "checks-across"],
)
def test_a_flip_after_another_test_is_settled_in_bs_order(
    repo: Repo, tmp_path: pathlib.Path, schema: Record, tests: dict[str, str], alone: str
) -> None:
    """T4 runs test_c_poison (it reaches half), T5 then test_a_remember and test_b_use (it reads
    the changed table), which fails after the poison on both sides. On its own, without
    test_a_remember, it fails on both sides (it needs its sibling) or passes on both (it checks
    the table only after its sibling): either way no run shows C in the state B's full run
    checked it in, and excused as order-dependent, a candidate breaking what it checks was
    CERTIFIED (three review probes: the last with the test it checks after in an earlier
    module). After the tests before it in B's full run, B passes it: C must too. Two candidates
    of one B, one keeping the table below 5 and one not (B's suite run is stored once)."""
    base = repo.commit({**PKG, "calc/table.txt": "1\n", **tests})
    for table, verdict in (("2", "CERTIFIED"), ("9", "REJECTED")):
        repo.git("checkout", "-q", base)
        cand = repo.commit({**FIX, "calc/table.txt": table + "\n"})
        code, doc = certify(repo, tmp_path / ("e-%s.json" % table), "--baseline", base, "--candidate", cand)
        assert doc is not None
        jsonschema.validate(doc, schema)
        assert doc["verdict"]["verdict"] == verdict, doc["verdict"]
        tid = "tests/test_b_use.py::test_b_use"
        result = next(r for r in doc["results"] if r["test_id"] == tid)
        rests_on = doc["annotations"][tid]["flip"]["rests_on"]
        if verdict == "REJECTED":
            assert code == 1 and (result["baseline_result"], result["candidate_result"]) == ("pass", "fail")
            assert rests_on == (
                "regression in B's order: fails on B too in the C run's selection%s, yet passes on B and fails on C "
                "after the tests before it in B's full run" % (" and on its own" if alone == "fail" else "")
            )
        else:
            assert code == 0 and (result["baseline_result"], result["candidate_result"]) == ("fail", "fail")
            assert ("on its own, %s on B and %s on C" % (alone, alone)) in rests_on, rests_on
            assert rests_on.endswith("after the tests before it in B's full run, pass on B and pass on C"), rests_on
            assert [d["test_id"] for d in doc["detections"] if d["kind"] == "order_dependent"] == [tid]


@pytest.mark.parametrize(("half", "verdict"), [("n // 2", "CERTIFIED"), ("0 if n == 6 else n // 2", "REJECTED")])
def test_a_flip_needing_a_test_of_another_module_is_settled_in_bs_order(
    repo: Repo, tmp_path: pathlib.Path, schema: Record, half: str, verdict: str
) -> None:
    """test_use passes in B's full run only after test_remember, in another module: T4 runs it
    alone, and it fails on both sides, on its own too. After the tests before it in B's full
    run B passes it, and C must: it was left unsettled, INCONCLUSIVE, where a run in B's order
    answers."""
    remember = "import calc\n\n\ndef test_remember():\n    calc.SEEN = True\n"
    use = "import calc\nfrom calc.ops import half\n\n\ndef test_use():\n    assert calc.SEEN and half(6) == 3\n"
    base = repo.commit({**PKG, "calc/ops.py": HALF_B, "tests/test_a_remember.py": remember, "tests/test_b_use.py": use})
    ops = FIX["calc/ops.py"].replace("return n // 2\n", "return %s\n" % half)
    cand = repo.commit({"calc/ops.py": ops, "tests/test_half.py": FIX["tests/test_half.py"]})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert doc["verdict"]["verdict"] == verdict, doc["verdict"]
    rests_on = doc["annotations"]["tests/test_b_use.py::test_use"]["flip"]["rests_on"]
    if verdict == "CERTIFIED":
        assert code == 0 and rests_on.endswith("after the tests before it in B's full run, pass on B and pass on C")
    else:
        assert code == 1 and rests_on.startswith("regression in B's order: fails on B too in the C run's selection and")


SILENCED_AFTER = {
    "tests/test_a_quiet.py": (
        "import pytest\n\nimport calc\n\n\ndef test_a_quiet():\n"
        "    if getattr(calc, 'POISONED', False):\n        pytest.skip('after test_b_poison')\n"
    ),
    "tests/test_b_poison.py": POISON,
}


def test_evidence_the_sessions_order_lost_is_found_apart(repo: Repo, tmp_path: pathlib.Path, schema: Record) -> None:
    """T4's group (test_b_poison) leaves behind what makes test_a_quiet skip when T7's group runs
    it in the same process; B, replaying the groups, skips it too: silenced on both sides. Run
    again on C, the whole suite collected and the test on its own, it passes: the session's
    order silenced it, and the evidence is found (it was INCONCLUSIVE: evidence lost)."""
    base = repo.commit({**PKG, **SILENCED_AFTER})
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]
    tid = "tests/test_a_quiet.py::test_a_quiet"
    assert "empty_collection" not in {d["kind"] for d in doc["detections"]}
    flip = doc["annotations"][tid]["flip"]
    assert (flip["baseline_full_suite"], flip["baseline_same_selection"]) == ("pass", "skipped")
    assert flip["rests_on"].startswith("evidence found apart: skipped on B too") and "yet pass on C" in flip["rests_on"]


@pytest.mark.parametrize(
    "command",
    [
        ["flaky", "list"],
        ["flaky", "clear", "tests/test_x.py::test_x"],
        ["receipts", "list"],
        ["baseline", "--ref", "HEAD", "--command", "true", "--timeout", "5"],
    ],
)
def test_a_corrupt_store_is_one_line_and_exit_2_for_every_command(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    repo.commit(PKG)
    bad = tmp_path / "store.sqlite3"
    bad.write_bytes(b"garbage" * 1000)
    code = main([*command, "--repo", str(repo.path), "--store", str(bad)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "is corrupt" in err[0] and "--store" in err[0] and "--evidence-store" not in err[0]
    assert err[0].endswith("[store-corrupt]")


def test_an_internal_error_is_one_line_a_traceback_file_and_the_record_of_what_ran(
    repo: Repo,
    tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    schema: Record,
) -> None:
    from runner.ladder import regress

    def defect(*args: object) -> None:
        raise RuntimeError("a defect of the runner (simulated)")

    monkeypatch.setattr(regress, "tiers", defect)
    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("evidence-runner: ")]
    assert code == 4 and len(err) == 1 and err[0].endswith("[internal]"), err
    trace = pathlib.Path(err[0].split("traceback in ", 1)[1].split(";", 1)[0])
    assert "Traceback" in trace.read_text() and "simulated" in trace.read_text()
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert doc["complete"] is False and doc["verdict"] is None and doc["exit_status"] == 4
    assert doc["incomplete_reason"].startswith("internal error: RuntimeError: a defect of the runner (simulated)")
    assert [t["status"] for t in doc["tiers"][:3]] == ["passed", "passed", "passed"]
    trace.unlink()


def test_an_interrupt_during_the_b_run_names_the_held_receipt_and_how_to_reconcile_it(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    import shlex
    import signal

    marker = tmp_path / "b-suite-started"
    slow = (
        "import pathlib, time\n\n\ndef test_slow_on_b():\n"
        "    ops = pathlib.Path(__file__).parents[1] / 'calc' / 'ops.py'\n"
        "    if 'n // 2 + 1' in ops.read_text():  # B's code: the baseline suite\n"
        f"        pathlib.Path({str(marker)!r}).touch()\n"
        "        time.sleep(60)\n"
    )
    base = repo.commit({**PKG, "tests/test_slow.py": slow})
    cand = repo.commit(FIX)
    code, err = _interrupted(repo, base, cand, tmp_path, marker, signal.SIGINT)
    line = err.strip().splitlines()[-1]
    assert code == 4 and line.endswith("[interrupted]"), err
    hint = line.split("reconcile it with: ", 1)[1].rsplit(" [interrupted]", 1)[0]
    assert hint.startswith("evidence-runner receipts reconcile ") and "--repo %s" % repo.path in hint
    words = shlex.split(hint.replace("--rerun|--abandon", "--abandon"))
    assert main(words[1:]) == 0  # the printed command works as printed


def test_a_test_whose_id_changes_between_collections_is_named_not_a_failure(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    """marshmallow's shape: a parametrization id that embeds the time of collection."""
    unstable = (
        "import time\n\nimport pytest\n\n\n"
        "@pytest.mark.parametrize('stamp', [str(time.time_ns())])\ndef test_stamped(stamp):\n    assert stamp\n"
    )
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, "tests/test_half.py": FIX["tests/test_half.py"] + "\n\n" + unstable})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]
    (detection,) = [d for d in doc["detections"] if d["kind"] == "unstable_test_id"]
    assert detection["test_id"].startswith("tests/test_half.py::test_stamped[")
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    assert t3["status"] == "passed" and t3["not_run"] == [detection["test_id"]]


def test_a_store_another_process_holds_is_bad_input_before_any_tier(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    from pytest_evidence.store import Store

    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    store = tmp_path / "store.sqlite3"
    Store(str(store)).close()
    holder = sqlite3.connect(str(store), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process is writing, past the store's 10 s wait
    try:
        words = ["--repo", str(repo.path), "--baseline", base, "--candidate", cand, "--store", str(store)]
        code = main(["certify", *words, "--out", str(tmp_path / "e.json")])
    finally:
        holder.rollback()
        holder.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].endswith("[store-locked]") and "--store" in err[0], err
    assert not (tmp_path / "e.json").exists()


def test_a_store_locked_mid_climb_is_an_error_of_the_running_tier_and_the_record_is_written(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, schema: Record
) -> None:
    from pytest_evidence.errors import StoreLocked
    from pytest_evidence.store import Store

    def locked(self: Store, *args: object) -> None:
        raise StoreLocked("evidence store %s is locked by another process (simulated)" % self.path)

    monkeypatch.setattr(Store, "suite_add", locked)
    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    errored = [t for t in doc["tiers"] if t["status"] == "error"]
    assert code == 3 and doc["complete"] is False and len(errored) == 1, doc["tiers"]
    assert "locked by another process" in errored[0]["note"] and "[store-locked]" in errored[0]["note"]


def test_the_record_says_how_b_was_obtained_and_is_readable_by_others(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    _, first = certify(repo, tmp_path / "a.json", "--baseline", base, "--candidate", cand)
    _, second = certify(repo, tmp_path / "b.json", "--baseline", base, "--candidate", cand)
    assert first is not None and second is not None
    assert (first["baseline_run"]["suite"], second["baseline_run"]["suite"]) == ("run now", "reused")
    assert first["baseline_run"]["receipt"] == second["baseline_run"]["receipt"]
    for doc in (first, second):  # the time B's run took to obtain, not counted in T3 or T4
        seconds = doc["baseline_run"]["seconds"]
        assert isinstance(seconds, float) and seconds >= 0.0
    assert second["baseline_environment"]["injected"] == second["environment"]["injected"]
    mode = (tmp_path / "a.json").stat().st_mode & 0o777
    assert mode == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_new_test_of_a_module_the_environment_lacks_is_not_evidence_either_way(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    """six's shape: a case for a C module (_dbm) this Python lacks; yamllint's: a unittest-style helper
    whose parameter pytest takes for a fixture it cannot find, on B and on C alike."""
    lacking = (
        "\n\ndef test_needs_a_c_module():\n    import _no_such_c_module_xyz  # noqa: F401\n"
        "\n\ndef test_codec(test_codec_name):\n    pass\n"
    )
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, "tests/test_half.py": FIX["tests/test_half.py"] + lacking})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]
    found = {d["test_id"]: d["detail"] for d in doc["detections"] if d["kind"] == "unrunnable_test"}
    assert found == {
        "tests/test_half.py::test_needs_a_c_module": "missing_module",
        "tests/test_half.py::test_codec": "setup_error",
    }
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    assert t3["note"] == "1 of 1 reproducer(s) bug-discriminating"


def test_a_changed_method_of_a_class_made_by_a_factory_is_a_reproducer(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    """lark's shape: test classes made per parameter inside a factory, collected from an aggregator."""
    factory = (
        "import unittest\n\nfrom calc.ops import half\n\n\ndef _make(n):\n"
        "    class _T(unittest.TestCase):\n"
        "        def test_half(self):\n            assert half(2 * n) >= 0\n\n"
        "    _T.__name__ = 'TestHalf%d' % n\n    return _T\n\n\n"
        "TestHalf1 = _make(1)\nTestHalf2 = _make(2)\n"
    )
    config = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npython_files = "__main__.py"\n'
    aggregator = "from .test_factory import *  # noqa: F403\n"
    base = repo.commit(
        {**PKG, "pyproject.toml": config, "tests/__init__.py": "", "tests/__main__.py": aggregator}
        | {"tests/test_factory.py": factory}
    )
    stronger = factory.replace("assert half(2 * n) >= 0", "assert half(2 * n) == n")
    doc = _certified_as_released(repo, tmp_path, schema, base, {"tests/test_factory.py": stronger})
    reproducers = sorted(r["test_id"] for r in doc["results"] if r["bug_discriminating"])
    assert reproducers == ["tests/__main__.py::TestHalf1::test_half", "tests/__main__.py::TestHalf2::test_half"]


def _certified_as_released(
    repo: Repo, tmp_path: pathlib.Path, schema: Record, base: str, tests: dict[str, str]
) -> Record:
    """The fix of ``half`` with ``tests``, certified against ``base`` with the release's own tests
    trusted (``--tests-from`` the candidate: changing a test is then no tamper); CERTIFIED."""
    cand = repo.commit({"calc/ops.py": FIX["calc/ops.py"], **tests})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--tests-from", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]
    return doc


TABLE_TESTS = (
    "import unittest\n\nfrom calc.ops import half\n\n\n"
    "class TestHalves(unittest.TestCase):\n    cases = CASES\n\n"
    "    def test_halves(self):\n        for n, want in self.cases:\n            self.assertEqual(half(n), want)\n"
)


def test_a_fix_whose_tests_grow_a_table_an_unchanged_test_reads_has_its_reproducer(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    """cssutils 2.6.0's shape: the fix's test patch grows a class-level table of cases, and the
    method reading it is unchanged. It was INCONCLUSIVE -- no reproducer, no test the candidate
    changed -- though that method fails on B and passes on C."""
    base = repo.commit({**PKG, "tests/test_table.py": TABLE_TESTS.replace("CASES", "[]")})
    grown = TABLE_TESTS.replace("CASES", "[(4, 2)]")
    doc = _certified_as_released(repo, tmp_path, schema, base, {"tests/test_table.py": grown})
    tid = "tests/test_table.py::TestHalves::test_halves"
    assert doc["annotations"][tid]["origin"] == "changed"
    assert [r["test_id"] for r in doc["results"] if r["bug_discriminating"]] == [tid]


def test_a_test_failing_on_both_sides_is_not_made_a_reproducer_by_a_name_it_does_not_read(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    """An existing test fails on B and on C (its environment); the honest fix adds a table for
    its new test, named like that test's local (``data``). The test was taken for a changed one
    -- its origin folded in every name it mentions -- its failure for the fix's failing
    reproducer, and the fix was REJECTED at T3 (a review's probe)."""
    tests = (
        "from calc.ops import double, half\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
        'def test_reads_config():\n    data = open("/nonexistent/cfg").read()\n    assert data\n'
    )
    base = repo.commit({**PKG, "tests/test_ops.py": tests})
    grown = tests.replace("half\n", "half\n\ndata = [(4, 2), (6, 3)]\n", 1)
    grown += "\n\ndef test_half():\n    for n, want in data:\n        assert half(n) == want\n"
    cand = repo.commit({"calc/ops.py": FIX["calc/ops.py"], "tests/test_ops.py": grown})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]
    assert doc["annotations"]["tests/test_ops.py::test_reads_config"]["origin"] == "unchanged"
    assert [r["test_id"] for r in doc["results"] if r["bug_discriminating"]] == ["tests/test_ops.py::test_half"]


def test_progress_quoting_a_test_id_with_brackets_is_printed_as_is(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A parametrized id like ``test_half[/t/x]`` reads as a closing markup tag to rich."""
    base = repo.commit(PKG)
    bracketed = (
        "import pytest\nfrom calc.ops import half\n\n\n"
        "@pytest.mark.parametrize('u', ['/t/x'])\ndef test_half(u):\n    assert half(4) == 2\n"
    )
    cand = repo.commit({"tests/test_half.py": bracketed})  # the test, without the fix
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert code == 1 and doc is not None and doc["complete"] is True
    said = " ".join(capsys.readouterr().err.split())  # progress wraps between words at 80 columns
    assert "tests/test_half.py::test_half[/t/x] fails on B and on C" in said


SKIPS_UNCHECKED = {
    **NEEDS_A_SIBLING_AND_NO_POISON,
    "tests/test_b_use.py": NEEDS_A_SIBLING_AND_NO_POISON["tests/test_b_use.py"]
    .replace("import calc\n", "import pytest\n\nimport calc\nfrom calc import ops\n")
    .replace(
        "def test_b_use():\n", "def test_b_use():\n    if not ops.CHECKED:\n        pytest.skip('not checked here')\n"
    ),
}


def test_an_order_dependent_flip_skipped_on_c_is_no_pass(repo: Repo, tmp_path: pathlib.Path, schema: Record) -> None:
    """test_b_use needs test_a_remember before it, fails after test_c_poison, and skips unless
    ``ops.CHECKED``: the candidate turns that off and breaks the table it checks. In T5 it is
    skipped on C, and fails on B in the C run's selection: the order explained it, the flip was
    excused and nothing said its body never ran on C -- CERTIFIED. No run on C passes it:
    INCONCLUSIVE."""
    ops = "CHECKED = %s\n\n\n"
    base = repo.commit(
        {**PKG, "calc/ops.py": ops % True + PKG["calc/ops.py"], "calc/table.txt": "1\n", **SKIPS_UNCHECKED}
    )
    cand = repo.commit({**FIX, "calc/ops.py": ops % False + FIX["calc/ops.py"], "calc/table.txt": "9\n"})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert code != 0 and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc["verdict"]
    tid = "tests/test_b_use.py::test_b_use"
    result = next(r for r in doc["results"] if r["test_id"] == tid)
    assert (result["baseline_result"], result["candidate_result"]) == ("fail", "skipped")
    rests_on = doc["annotations"][tid]["flip"]["rests_on"]
    assert rests_on.startswith("order_dependent, unsettled") and "skipped on C" in rests_on, rests_on
    t5 = next(t for t in doc["tiers"] if t["tier"] == "T5")
    assert t5["status"] == "inconclusive" and "order-dependent flip of %s could not be settled" % tid in t5["note"]


def _kept(repo: Repo) -> pathlib.Path:
    common = pathlib.Path(repo.git("rev-parse", "--git-common-dir"))
    return (common if common.is_absolute() else repo.path / common) / "evidence" / "bytecode"


def _judged(doc: Record) -> list[tuple[object, ...]]:
    """What a record says of each test, its failure's place included; no timing."""
    rows = []
    for result in doc["results"]:
        failure = result["failure"] or {}
        rows.append((result["test_id"], result["baseline_result"], result["candidate_result"], failure.get("path")))
    return sorted(rows, key=repr)


def test_a_later_certify_runs_what_bs_suite_compiled_and_judges_the_same(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B's suite run (a store named elsewhere: the directory is covered on its own) keeps what it
    compiled; a regressing candidate's suite session then reads it for every file it did not
    change, and its record -- the failing unchanged test located in this checkout's file -- is
    the record made with nothing kept."""
    if not netns.can_hide():
        pytest.skip("no mount namespace here: nothing is kept")
    base = repo.commit(PKG)
    regress = repo.commit({**FIX, "calc/ops.py": FIX["calc/ops.py"].replace("n * 2", "n * 3")})
    store = str(tmp_path / "elsewhere.sqlite3")
    args = (
        "--baseline",
        base,
        "--candidate",
        regress,
        "--reproducer",
        "tests/test_half.py::test_half",
        "--store",
        store,
    )
    code, cold = certify(repo, tmp_path / "cold.json", *args)
    assert cold is not None and (code, cold["verdict"]["verdict"]) == (1, "REJECTED")
    assert cold["baseline_run"]["suite"] == "run now"
    kept = [p.name for p in _kept(repo).rglob("*") if p.is_file()]
    assert any(name.endswith("-pytest-%s" % pytest.__version__) for name in kept), kept  # the rewritten test module
    assert len(kept) >= 3, kept  # and calc's two modules
    seeded: list[str] = []
    real = compiled.seed

    def seed(target: Target, checkout: pathlib.Path, cache: str) -> None:
        real(target, checkout, cache)
        seeded.extend(sorted(p.relative_to(checkout).as_posix() for p in checkout.rglob("*.pyc")))

    monkeypatch.setattr(compiled, "seed", seed)
    code, warm = certify(repo, tmp_path / "warm.json", *args)
    assert warm is not None and (code, warm["baseline_run"]["suite"]) == (1, "reused")
    # T3 collected tests/test_half.py alone: the unchanged test module's .pyc came from B's run
    assert [p for p in seeded if p.startswith("tests/__pycache__/test_ops.")], seeded
    shutil.rmtree(_kept(repo))
    code, bare = certify(repo, tmp_path / "bare.json", *args)
    assert bare is not None and code == 1
    assert _judged(warm) == _judged(bare) == _judged(cold)
    assert ("tests/test_ops.py::test_double", "pass", "fail", "tests/test_ops.py") in _judged(warm)
    assert [t["status"] for t in warm["tiers"]] == [t["status"] for t in bare["tiers"]]
