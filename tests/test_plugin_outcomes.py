"""Every collected test becomes one typed result; the record is written and validates."""

from __future__ import annotations

import json
import sqlite3
import sys

import pytest
from conftest import SHARED_IDS_CONFTEST, Record, RunEvidence, by_name

from pytest_evidence.seedless_children import HASHSEED_NOT_INHERITED
from pytest_evidence.stream import read


def test_a_failed_subtest_fails_its_test(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    """A ``unittest.TestCase`` looping over cases with ``self.subTest``: on pytest 9 a failing
    case is a subtest report of its own, and the test's own call report still says passed --
    taken last, it made a broken function's test a pass (a real project's data test, tomli's,
    certified a regression). A subtest failing in every attempt fails the test; so does one of
    pytest's ``subtests`` fixture where pytest has it."""
    fixture = hasattr(pytest, "Subtests")
    pytester.makepyfile(
        test_cases="""
        import unittest

        import pytest

        class TestData(unittest.TestCase):
            def test_valid(self):
                for n in range(3):
                    with self.subTest(msg=str(n)):
                        assert n != 1

            def test_all_pass(self):
                for n in range(3):
                    with self.subTest(msg=str(n)):
                        assert n < 3

        @pytest.mark.skipif(not hasattr(pytest, "Subtests"), reason="no subtests fixture")
        def test_fixture(request):
            subtests = request.getfixturevalue("subtests")
            for n in range(3):
                with subtests.test(msg=str(n)):
                    assert n != 1
        """
    )
    result, doc = run_evidence()
    assert result.ret == 1
    res = by_name(doc)
    got = {name: r["candidate_result"] for name, r in res.items()}
    assert got == {"test_valid": "fail", "test_all_pass": "pass", "test_fixture": "fail" if fixture else "skipped"}
    failure = res["test_valid"]["failure"]
    assert failure["kind"] == "assertion" and "1 != 1" in failure["message"], failure
    attempts = doc["annotations"][res["test_valid"]["test_id"]]["attempts"]
    assert attempts == ["fail", "fail", "fail"]  # re-run as any failure is, never passing


def test_a_failed_subtest_is_reported_once_though_its_test_ran_again(
    pytester: pytest.Pytester, run_evidence: RunEvidence
) -> None:
    """A failing test runs again (two reruns by default) and only its first failing attempt is
    logged; a subtest's report is logged from inside each attempt, and reached the terminal and
    junitxml once per attempt: "3 failed" and three ``SUBFAILED`` lines for one failing case.
    pytest's own count, once; the record still has every attempt."""
    pytester.makepyfile(
        test_cases="""
        import unittest

        class TestData(unittest.TestCase):
            def test_valid(self):
                for n in range(3):
                    with self.subTest(n=n):
                        assert n != 1
        """
    )
    result, doc = run_evidence("--junitxml=junit.xml")
    assert result.parseoutcomes()["failed"] == 1, result.stdout.str()
    reported = 1 if hasattr(pytest, "Subtests") else 0  # pytest 9 reports a subtest on its own
    assert result.stdout.str().count("SUBFAILED") == reported
    junit = (pytester.path / "junit.xml").read_text()
    assert junit.count("<failure") == 1, junit
    (res,) = doc["results"]
    assert res["candidate_result"] == "fail"
    assert doc["annotations"][res["test_id"]]["attempts"] == ["fail", "fail", "fail"]


def test_each_outcome_is_merged_into_one_result(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    pytester.makepyfile(
        test_mix="""
        import pytest

        @pytest.fixture
        def broken():
            raise RuntimeError("setup exploded")

        @pytest.fixture
        def bad_teardown():
            yield
            raise RuntimeError("teardown exploded")

        def test_pass():
            print("hello from the test")

        def test_fail():
            assert 1 + 1 == 3

        def test_exception():
            raise KeyError("missing")

        def test_setup_error(broken):
            pass

        def test_teardown_error(bad_teardown):
            pass

        @pytest.mark.skip(reason="not today")
        def test_skipped():
            pass

        @pytest.mark.xfail(reason="known", strict=False)
        def test_xfailed():
            assert 0

        @pytest.mark.xfail(reason="known", strict=False)
        def test_xpassed():
            pass
        """
    )
    result, doc = run_evidence()
    result.assert_outcomes(passed=2, failed=2, errors=2, skipped=1, xfailed=1, xpassed=1)
    res = by_name(doc)
    got = {name: r["candidate_result"] for name, r in res.items()}
    assert got == {
        "test_pass": "pass",
        "test_fail": "fail",
        "test_exception": "fail",
        "test_setup_error": "error",
        "test_teardown_error": "error",
        "test_skipped": "skipped",
        "test_xfailed": "xfailed",
        "test_xpassed": "xpassed",
    }
    assert res["test_pass"]["failure"] is None
    assert "hello from the test" in res["test_pass"]["stdout_summary"]
    fail = res["test_fail"]["failure"]
    assert fail["kind"] == "assertion" and fail["line"] == 16 and fail["path"].endswith("test_mix.py")
    assert "assert (1 + 1) == 3" in fail["message"] or "assert 2 == 3" in fail["message"]
    assert res["test_exception"]["failure"]["kind"] == "exception"
    assert res["test_setup_error"]["failure"]["kind"] == "setup_error"
    assert "setup exploded" in res["test_setup_error"]["failure"]["message"]
    assert res["test_teardown_error"]["failure"]["kind"] == "teardown_error"
    assert res["test_skipped"]["failure"]["message"].endswith("not today")
    assert all(r["exit_code"] == 1 for r in doc["results"])
    assert doc["complete"] is True and doc["collected"] == 8


def test_without_a_baseline_nothing_is_typed_and_the_summary_says_so(
    pytester: pytest.Pytester, run_evidence: RunEvidence
) -> None:
    pytester.makepyfile("def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    result, doc = run_evidence()
    assert all(r["role"] is None and r["baseline_result"] is None for r in doc["results"])
    # nothing was asked to be typed: no typing failure per test, said once instead
    assert doc["summary"]["typing_failures"] == 0 and doc["summary"]["evidence_typing_coverage"] == 0.0
    assert not [d for d in doc["detections"] if d["kind"] == "typing_failure"]
    result.stdout.fnmatch_lines(["*evidence*", "no baseline: 2 result(s) recorded without B/C contrast*--baseline=REV"])
    assert "typing failure" not in result.stdout.str()
    result.stdout.no_fnmatch_line("*all tests passed*")


def test_stdout_summary_is_bounded(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    pytester.makepyfile("def test_loud():\n    print('x' * 100000)\n")
    _, doc = run_evidence()
    assert len(doc["results"][0]["stdout_summary"]) <= 4096


def test_plugin_is_inert_unless_asked_for(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*= evidence =*")
    assert not (pytester.path / ".pytest_cache" / "evidence").exists()


def test_no_evidence_keeps_it_out(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:evidence", "--evidence-out=x.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # the option does not even exist
    assert not (pytester.path / "x.json").exists()


@pytest.mark.parametrize("value", ["-1", "6", "many"])
def test_reruns_out_of_range_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "evidence", f"--evidence-reruns={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--evidence-reruns" in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


def test_options_can_come_from_ini(pytester: pytest.Pytester, schema: Record) -> None:
    pytester.makeini("[pytest]\nevidence_out = from-ini.json\nevidence_reruns = 0\n")
    pytester.makepyfile("def test_a():\n    assert 0\n")
    pytester.runpytest("-p", "evidence")
    doc = json.loads((pytester.path / "from-ini.json").read_text())
    assert next(iter(doc["annotations"].values()))["attempts"] == ["fail"]  # 0 reruns
    assert (pytester.path / "from-ini.jsonl").exists()


def test_corrupt_store_stops_the_session_before_tests_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    bad = pytester.path / "store.sqlite3"
    bad.write_bytes(b"garbage" * 500)
    result = pytester.runpytest_subprocess("-p", "evidence", f"--evidence-store={bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: evidence: evidence store * is corrupt*[[]store-corrupt]"])
    assert "Traceback" not in result.stderr.str()


def test_no_network_blocks_and_names_every_address(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    pytester.makepyfile(
        test_net="""
        import socket

        def test_remote():
            socket.create_connection(("192.0.2.1", 80), timeout=1)

        def test_lookup():
            socket.getaddrinfo("example.com", 443)

        def test_loopback():
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen()
            socket.create_connection(server.getsockname()).close()
            server.close()
        """
    )
    _, doc = run_evidence("--evidence-no-network")
    outcomes = {k: v["candidate_result"] for k, v in by_name(doc).items()}
    assert outcomes == {"test_remote": "fail", "test_lookup": "fail", "test_loopback": "pass"}
    blocked = {d["test_id"].split("::")[-1]: d["message"] for d in doc["detections"] if d["kind"] == "network_blocked"}
    assert "192.0.2.1:80" in blocked["test_remote"] and "example.com" in blocked["test_lookup"]
    assert "test_loopback" not in blocked
    attempts = [d for d in doc["detections"] if d["kind"] == "network_attempt"]
    assert [(d["test_id"].split("::")[-1], d["detail"]) for d in attempts] == [("test_loopback", "loopback")]
    assert "127.0.0.1:" in attempts[0]["message"]


def test_the_record_and_the_stored_results_are_the_compact_json_of_what_was_typed(
    pytester: pytest.Pytester, run_evidence: RunEvidence
) -> None:
    """The record is written from results encoded once (each is also the store's row): the file is
    still ``json.dumps`` of the whole record, byte for byte."""
    pytester.makepyfile(
        test_mixed="""
        def test_pass():
            print("caf\\u00e9 \\\\ \\"quoted\\"")

        def test_fail():
            assert 0.1 + 0.2 == 0.3
        """
    )
    store = pytester.path / "store.sqlite3"
    _, doc = run_evidence(f"--evidence-store={store}", "--evidence-reruns=0")
    text = (pytester.path / "evidence.json").read_text(encoding="utf-8")
    assert text == json.dumps(doc, separators=(",", ":")) + "\n"
    db = sqlite3.connect(store)
    rows = db.execute("SELECT test_id, payload FROM results WHERE run_id = ? ORDER BY rowid", (doc["run_id"],))
    assert rows.fetchall() == [(r["test_id"], json.dumps(r, separators=(",", ":"))) for r in doc["results"]]
    assert db.execute("SELECT COUNT(*) FROM runs WHERE run_id = ?", (doc["run_id"],)).fetchone() == (1,)


def test_each_test_s_markers_are_streamed_as_pytest_iterates_them(pytester: pytest.Pytester) -> None:
    """Marker names are gathered once per parent node; what is streamed is what each item's
    ``iter_markers`` gives."""
    pytester.makeini("[pytest]\nmarkers =\n    module_wide\n    on_class\n    slow\n")
    pytester.makeconftest(
        """
        import json

        def pytest_collection_finish(session):
            names = {i.nodeid: sorted({m.name for m in i.iter_markers()}) for i in session.items}
            with open("expected.json", "w") as fh:
                json.dump({k: v for k, v in names.items() if v}, fh)
        """
    )
    pytester.makepyfile(
        test_marked="""
        import pytest

        pytestmark = [pytest.mark.module_wide, pytest.mark.filterwarnings("ignore")]

        @pytest.mark.on_class
        class TestSome:
            @pytest.mark.parametrize("v", [1, pytest.param(2, marks=pytest.mark.slow)])
            def test_param(self, v):
                pass

            def test_plain(self):
                pass

        @pytest.mark.skip
        def test_skipped():
            pass
        """,
        test_unmarked="def test_nothing():\n    pass\n",
    )
    stream = pytester.path / "s.jsonl"
    pytester.runpytest("-p", "evidence", f"--evidence-stream={stream}")
    expected = json.loads((pytester.path / "expected.json").read_text())
    assert read(str(stream)).markers == expected
    assert expected["test_marked.py::TestSome::test_param[2]"] == [
        "filterwarnings",
        "module_wide",
        "on_class",
        "parametrize",
        "slow",
    ]


def test_asked_by_the_runner_the_plugin_keeps_the_hash_seed_from_the_tests_subprocesses(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``options.HASHSEED_NOT_INHERITED``: the process keeps the seed it started with, and what
    the tests start draws its own -- before any conftest runs, as under a plain pytest."""
    pytester.makeconftest("import os\n\nSEEN = os.environ.get('PYTHONHASHSEED')\n")
    pytester.makepyfile(
        """
        import os, subprocess, sys

        import conftest


        def test_seed():
            assert conftest.SEEN is None and "PYTHONHASHSEED" not in os.environ
            assert not [k for k in os.environ if k.startswith("PYTEST_EVIDENCE_")]
            assert sys.flags.hash_randomization and hash("x") == int(os.environ["HASHED"])
            child = subprocess.run([sys.executable, "-c", "print(hash('x'))"], capture_output=True, text=True)
            assert child.stdout.strip() != os.environ["HASHED"]
        """
    )
    monkeypatch.setenv("PYTHONHASHSEED", "4242")
    monkeypatch.setenv("HASHED", pytester.run(sys.executable, "-c", "print(hash('x'))").outlines[0])
    monkeypatch.setenv(HASHSEED_NOT_INHERITED, "1")
    pytester.runpytest_subprocess("-p", "evidence", "-p", "no:randomly").assert_outcomes(passed=1)
    monkeypatch.delenv(HASHSEED_NOT_INHERITED)
    pytester.makepyfile("import os\n\n\ndef test_seed():\n    assert os.environ['PYTHONHASHSEED'] == '4242'\n")
    pytester.runpytest_subprocess("-p", "evidence", "-p", "no:randomly").assert_outcomes(passed=1)


def test_items_that_share_an_id_get_ids_of_their_own(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    """A collector naming every case of a data file alike (docopt-ng's ``testcases(N)``): the second
    and later items of an id are ``ID[#N]``, in collection order, each with its own result."""
    pytester.makeconftest(SHARED_IDS_CONFTEST)
    pytester.path.joinpath("data.cases").write_text("False\nTrue\nTrue\n")
    result, doc = run_evidence("data.cases")
    assert result.ret == 1
    got = [(r["test_id"], r["candidate_result"]) for r in doc["results"]]
    assert got == [("data.cases::case", "fail"), ("data.cases::case[#2]", "pass"), ("data.cases::case[#3]", "pass")]


def test_a_file_two_arguments_reach_is_one_test_run_once(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    """pytest 7 collects a package's test file twice when a directory above it and the file are
    both named (as the runner names a changed test file beside the operator's ``tests``): the same
    test, made twice. It runs once, with its own id -- numbered ``[#2]`` and run again, its second
    run met the first's leftovers (responses' ``test_add_from_file``) and falsified a real fix."""
    pytester.makepyfile(
        **{"pkg/__init__": "", "pkg/tests/__init__": "", "pkg/tests/test_a": "def test_a():\n    pass\n"}
    )
    result, doc = run_evidence("pkg/tests", "pkg/tests/test_a.py")
    assert result.ret == 0
    assert [r["test_id"] for r in doc["results"]] == ["pkg/tests/test_a.py::test_a"]
