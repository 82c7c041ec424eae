"""certify-batch: many candidates against one B -- ranked, resumable, each as if certified alone."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import time
from typing import Any

import jsonschema
import pytest
from conftest import Record

from pytest_evidence import gitops
from pytest_evidence.errors import EXIT_BAD_INPUT, EXIT_CERTIFIED
from runner import example_repo
from runner.batch import candidates, local, rank, ship
from runner.cli import main

NAMES = ("regression", "honest-fix", "no-fix")


class Batch:
    def __init__(self, work: pathlib.Path) -> None:
        self.work = work
        self.repo = example_repo.build(work / "shop")
        self.store = work / "store.sqlite3"
        self.out = work / "out"
        self.list = work / "candidates.txt"
        fix = subprocess.run(
            ["git", "diff", self.repo.baseline, self.repo.candidates["honest-fix"]],
            cwd=self.repo.path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (work / "patches").mkdir()
        (work / "patches" / "honest.patch").write_text(fix)
        (work / "patches" / "garbage.patch").write_text("this is not a diff\n")
        lines = [self.repo.candidates[n] for n in NAMES] + ["patches/honest.patch", "patches/garbage.patch"]
        self.list.write_text("# one candidate per line\n" + "\n".join(lines) + "\n")

    def args(self, *extra: str, listed: pathlib.Path | None = None) -> list[str]:
        return [
            "certify-batch",
            "--repo",
            str(self.repo.path),
            "--baseline",
            self.repo.baseline,
            "--candidates",
            str(listed or self.list),
            "--out",
            str(self.out),
            "--store",
            str(self.store),
            "--jobs",
            "2",
            *extra,
        ]

    def summary(self) -> dict[str, Any]:
        doc = json.loads((self.out / "batch.json").read_text())
        assert isinstance(doc, dict)
        return doc


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Batch, int, str]:
    found = Batch(tmp_path_factory.mktemp("batch"))
    proc = subprocess.run(
        [sys.executable, "-m", "runner.cli", *found.args()], capture_output=True, text=True, check=False
    )
    return found, proc.returncode, proc.stdout + proc.stderr


def test_the_batch_ranks_every_candidate_on_its_evidence(batch: tuple[Batch, int, str], schema: Record) -> None:
    found, code, said = batch
    assert code == EXIT_CERTIFIED, said
    doc = found.summary()
    order = [(r["name"], r["verdict"], r["halted_at"]) for r in doc["ranking"]]
    honest = found.repo.candidates["honest-fix"][:12]
    # certified first (the commit and the same fix as a patch: equal evidence, then by cost and name),
    # then the falsified by fewest regressions, then the candidate whose certify could not judge it
    assert {order[0][0], order[1][0]} == {honest, "honest"} and order[0][1] == order[1][1] == "CERTIFIED"
    assert order[2] == (found.repo.candidates["no-fix"][:12], "REJECTED", "T3")
    assert order[3] == (found.repo.candidates["regression"][:12], "REJECTED", "T4")
    assert order[4][0] == "garbage" and order[4][1] is None
    garbage = doc["ranking"][4]
    assert garbage["exit_code"] == EXIT_BAD_INPUT and "certify exited 2" in garbage["reason"]
    assert doc["verdicts"] == {"CERTIFIED": 2, "INCONCLUSIVE": 0, "REJECTED": 2, "no verdict": 1}
    for row in doc["ranking"][:4]:
        jsonschema.validate(json.loads(pathlib.Path(row["record"]).read_text()), schema)
    assert "| 1 | `" in (found.out / "batch.md").read_text()
    assert "B: building (or finding) the baseline suite run, once for 5 candidate(s)" in said


def _comparable(doc: Record) -> dict[str, Any]:
    """What must not depend on being judged in a batch: everything but ids, clocks and the out path."""
    return {
        "verdict": doc["verdict"],
        "tiers": [(t["tier"], t["status"], t["selected"], t["run"], t["suite_size"]) for t in doc["tiers"]],
        "results": sorted(
            (r["test_id"], r["role"], r["baseline_result"], r["candidate_result"], r["bug_discriminating"])
            for r in doc["results"]
        ),
        "classes": {t: a["bc_class"] for t, a in doc["annotations"].items()},
        "detections": sorted((d["kind"], d["detail"], d["test_id"]) for d in doc["detections"]),
        "commits": (doc["baseline_commit"], doc["candidate_commit"]),
        "baseline_run": (doc["baseline_run"] or {}).get("suite"),
        "invocation": {k: v for k, v in (doc["invocation"] or {}).items() if k != "python"},
    }


@pytest.mark.parametrize("name", NAMES[:2])
def test_a_batch_record_is_the_record_of_certifying_the_candidate_alone(
    batch: tuple[Batch, int, str], name: str, tmp_path: pathlib.Path
) -> None:
    found, _code, _said = batch
    alone = tmp_path / "alone.json"
    assert main(["certify", *found.repo.certify_args(name, alone, found.store)]) in (0, 1, 3)
    in_batch = found.out / "records" / (found.repo.candidates[name][:12] + ".json")
    assert _comparable(json.loads(in_batch.read_text())) == _comparable(json.loads(alone.read_text()))


def test_a_second_run_resumes_without_judging_a_finished_candidate_again(
    batch: tuple[Batch, int, str], capsys: pytest.CaptureFixture[str]
) -> None:
    found, _code, _said = batch
    records = sorted((found.out / "records").glob("*.json"))
    before = {p: p.stat().st_mtime_ns for p in records}
    assert main(found.args()) == EXIT_CERTIFIED
    assert "5 candidate(s) to certify, 1 on 2 job(s); the rest were finished before" in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in records} == before  # only the unjudged one ran again
    # another list into the same --out is another batch: bad input, nothing run
    other = found.work / "other.txt"
    other.write_text(found.repo.candidates["no-fix"] + "\n")
    assert main(found.args(listed=other)) == EXIT_BAD_INPUT
    assert "holds another batch" in capsys.readouterr().err


def test_a_candidate_past_its_timeout_is_killed_with_its_processes(tmp_path: pathlib.Path) -> None:
    """A hang costs its own slot only: the whole process group goes at the timeout."""
    marker = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time; "
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
        "open(%r, 'w').write(str(child.pid)); time.sleep(120)" % str(marker)
    )
    finished = local.certify_one(["-c", script], tmp_path / "hang.log", timeout=3.0, module=False)
    assert finished.exit_code is None and finished.error is None
    stat = pathlib.Path("/proc/%s/stat" % marker.read_text())

    def dead() -> bool:
        """Gone, or dead and waiting for init to reap it (a killed process under load may still
        show R for a moment: it has to be scheduled to die)."""
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except FileNotFoundError:
            return True

    for _ in range(300):  # the kill was sent; wait for it to land, at most about 30 s
        if dead():
            break
        time.sleep(0.1)
    assert dead()  # the grandchild went with its group


def test_candidates_are_read_from_a_list_or_a_directory(batch: tuple[Batch, int, str], tmp_path: pathlib.Path) -> None:
    found, _code, _said = batch
    listed = candidates.read(found.list, found.repo.path)
    assert [c.name for c in listed][-2:] == ["honest", "garbage"]
    assert listed[0].revision == found.repo.candidates["regression"]
    patches = candidates.read(found.work / "patches", found.repo.path)
    assert [c.name for c in patches] == ["garbage", "honest"]  # a directory: its *.patch files by name
    bad = tmp_path / "bad.txt"
    bad.write_text("no-such-revision\n")
    with pytest.raises(Exception, match=r"bad.txt:1: 'no-such-revision' is neither a patch file nor a revision"):
        candidates.read(bad, found.repo.path)
    twice = tmp_path / "twice.txt"
    twice.write_text("%s\n%s\n" % (found.work / "patches" / "honest.patch", found.work / "patches" / "honest.patch"))
    assert [c.name for c in candidates.read(twice, found.repo.path)] == ["honest", "honest-2"]


def test_ranking_puts_certified_first_then_fewest_regressions_then_strongest_evidence_then_cheapest() -> None:
    def row(name: str, verdict: str | None, regressions: int, discriminating: int, seconds: float) -> dict[str, Any]:
        return {
            "name": name,
            "verdict": verdict,
            "regressions": regressions,
            "bug_discriminating": discriminating,
            "kept_passing": 0,
            "ladder_seconds": seconds,
        }

    rows = [
        row("none", None, 0, 0, 0.0),
        row("rej-2", "REJECTED", 2, 1, 1.0),
        row("rej-0", "REJECTED", 0, 0, 9.0),
        row("inc", "INCONCLUSIVE", 0, 0, 1.0),
        row("cert-slow", "CERTIFIED", 0, 2, 9.0),
        row("cert-fast", "CERTIFIED", 0, 2, 1.0),
        row("cert-strong", "CERTIFIED", 0, 3, 20.0),
    ]
    ranked = [r["name"] for r in sorted(rows, key=rank.rank_key)]
    assert ranked == ["cert-strong", "cert-fast", "cert-slow", "inc", "rej-0", "rej-2", "none"]


def test_without_ray_the_ray_executor_is_one_line_of_bad_input_naming_the_extra(
    batch: tuple[Batch, int, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    found, _code, _said = batch
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without the extra gives
    assert main(found.args("--executor", "ray")) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert "--executor ray needs Ray, which is not installed: pip install 'pytest-evidence[ray]'" in err
    assert len(err.splitlines()) == 1
    assert main(found.args("--address", "ray://nowhere:10001")) == EXIT_BAD_INPUT
    assert "--address needs --executor ray" in capsys.readouterr().err


def test_the_shipped_bundle_clones_with_every_commit_the_batch_names_and_leaves_the_repo_alone(
    batch: tuple[Batch, int, str], tmp_path: pathlib.Path
) -> None:
    found, _code, _said = batch
    repo = str(found.repo.path)
    # a commit no ref reaches (a harness's sampled candidate, say) travels too
    loose = gitops.git(["commit-tree", "-p", found.repo.baseline, "-m", "loose", gitops.tree_of(repo, "HEAD")], repo)
    commit = loose.stdout.decode().strip()
    refs = gitops.git(["for-each-ref"], repo).stdout
    data = ship.bundle(found.repo.path, [found.repo.baseline, commit])
    assert gitops.git(["for-each-ref"], repo).stdout == refs  # no ref of ours in the user's repository
    for n in (1, 2):  # each task its own clone: nothing shared
        ship.clone(data, tmp_path / str(n))
        clone = str(tmp_path / str(n))
        assert gitops.toplevel(clone) == clone
        assert gitops.resolve_commit(clone, commit) == commit
        assert gitops.resolve_commit(clone, "honest-fix") == found.repo.candidates["honest-fix"]  # branches too
        assert gitops.resolve_commit(clone, "HEAD") == gitops.resolve_commit(repo, "HEAD")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1", "2"]  # the bundle files are gone
