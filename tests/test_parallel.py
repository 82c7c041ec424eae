"""B's suite run on several processes (``runner.parallel``): when, how, and that it changes nothing found."""

from __future__ import annotations

import pathlib
from typing import Any

import jsonschema
import pytest
from conftest import FIX, PKG, Repo, certify

from runner import parallel


def test_two_workers_only_for_a_large_suite_where_xdist_is_installed() -> None:
    large = parallel.MIN_TESTS
    assert parallel.xdist_args(True, 2, large) == ["-n", "2", "--dist", "loadfile"]
    assert parallel.xdist_args(True, 2, large - 1) == []  # two interpreter starts cost more than they save
    assert parallel.xdist_args(False, 4, large) == []  # the target's environment is the target's
    assert parallel.xdist_args(True, 1, large) == []  # --jobs 1: serial


def _findings(doc: dict[str, Any]) -> dict[str, Any]:
    """What a record found, without what differs from run to run (ids, times, the jobs asked for)."""
    return {
        "verdict": doc["verdict"],
        "tiers": [{k: t[k] for k in ("tier", "status", "selected", "run", "suite_size", "note")} for t in doc["tiers"]],
        "results": sorted(
            (r["test_id"], r["role"], r["baseline_result"], r["candidate_result"], r["bug_discriminating"])
            for r in doc["results"]
        ),
        "detections": sorted((d["kind"], d["test_id"]) for d in doc["detections"]),
    }


def test_a_parallel_baseline_run_finds_what_a_serial_one_finds(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    many = "import pytest\n\nfrom calc.ops import double\n\n\n@pytest.mark.parametrize('n', range(25))\n"
    many += "def test_double_many(n):\n    assert double(n) == 2 * n\n"
    files = {**PKG, **{"tests/test_many_%d.py" % i: many for i in range(2)}}
    base = repo.commit(files)
    cand = repo.commit(FIX)
    monkeypatch.setattr(parallel, "MIN_TESTS", 50)
    found = {}
    for jobs in ("1", "2"):
        out = tmp_path / ("jobs-%s.json" % jobs)
        store = tmp_path / ("store-%s.sqlite3" % jobs)  # each builds its own B suite run
        code, doc = certify(repo, out, "--baseline", base, "--candidate", cand, "--jobs", jobs, "--store", str(store))
        assert doc is not None and code == 0, doc and doc["verdict"]
        jsonschema.validate(doc, schema)
        assert doc["invocation"]["jobs"] == int(jobs)
        assert doc["baseline_run"]["suite"] == "run now" and doc["baseline_run"]["processes"] == int(jobs)
        found[jobs] = _findings(doc)
    assert found["1"] == found["2"]
    assert found["2"]["verdict"]["verdict"] == "CERTIFIED"
