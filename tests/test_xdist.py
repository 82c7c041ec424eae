"""``-n 2`` gives the same record as a serial run: same tests, same outcomes, same roles."""

from __future__ import annotations

import pytest
from conftest import GitRepo, Record, RunEvidence, fix

pytest.importorskip("xdist")


def _essence(doc: Record) -> dict[str, tuple[object, ...]]:
    return {
        r["test_id"]: (r["role"], r["baseline_result"], r["candidate_result"], r["bug_discriminating"])
        for r in doc["results"]
    }


def test_xdist_record_equals_serial_record(shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence) -> None:
    repo, base = shop_repo
    fix(repo)
    more = "import pytest\n\n@pytest.mark.parametrize('n', range(6))\ndef test_n(n):\n    assert n >= 0\n"
    repo.write({"tests/test_more.py": more})
    _, serial = run_evidence(f"--baseline={base}", out="serial.json")
    _, parallel = run_evidence(f"--baseline={base}", "-n", "2", out="parallel.json")
    assert _essence(parallel) == _essence(serial)
    assert len(serial["results"]) == 9
    assert parallel["collected"] == serial["collected"] == 9


def test_xdist_flaky_attempts_cross_the_wire(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    from test_flake_policy import FLIP

    pytester.makepyfile(test_flaky=FLIP)
    result, doc = run_evidence("-n", "2")
    assert doc["results"][0]["candidate_result"] == "flaky"
    result.stdout.fnmatch_lines(["*1 flaky*"])  # the controller shows the workers' flips as flips


def test_xdist_workers_leave_the_output_directory_alone(
    pytester: pytest.Pytester, run_evidence: RunEvidence, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that probed the record's directory made a file appear and vanish while the other
    worker listed that directory for collection: pytest asserts each listed entry is still a file,
    and the session errored at random (seen in CI). Only the controller, which writes, probes."""
    # This test may itself run in an xdist worker: its controller would inherit the variable.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makeconftest(
        """
        import os
        import pytest_evidence.output as output

        _check = output.check_writable

        def check_writable(path, option, create_parents):
            with open("probed-by-%s" % os.environ.get("PYTEST_XDIST_WORKER", "controller"), "w"):
                pass
            _check(path, option, create_parents)

        output.check_writable = check_writable
        """
    )
    pytester.makepyfile(test_a="def test_a():\n    pass\n")
    _, doc = run_evidence("-n", "2")
    assert [r["candidate_result"] for r in doc["results"]] == ["pass"]
    # The controller's probe is seen: the spy would have seen a worker's.
    assert sorted(p.name for p in pytester.path.glob("probed-by-*")) == ["probed-by-controller"]
