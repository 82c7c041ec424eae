"""The A/B harness, smoke-sized: two single-commit cases built locally, both arms, the decision rule.

Everything is made here -- two git repositories with a buggy and a fixed commit each, a corpus
file in the ``commit`` format, the candidates derived from the fix -- and ``evidence-runner ab``
runs every candidate through the battery and the naive judge. No download: the cases name this
interpreter as their environment.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys
import venv
from typing import Any

import jsonschema
import pytest
from conftest import FIX, PKG, Repo

from pytest_evidence.errors import BadInput, ToolFailed
from runner.ab import corpus, derive, harness
from runner.cli import main

PYPROJECT = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
SLUG_B = {
    "text/__init__.py": "",
    "text/slug.py": "def slug(s):\n    return s.lower()\n",
    "tests/test_slug.py": "from text.slug import slug\n\n\ndef test_lower():\n    assert slug('ABC') == 'abc'\n",
    "pyproject.toml": PYPROJECT,
}
SLUG_FIX = {
    "text/slug.py": "def slug(s):\n    return s.lower().replace(' ', '-')\n",
    "tests/test_space.py": "from text.slug import slug\n\n\ndef test_space():\n    assert slug('A B') == 'a-b'\n",
}

UNITTEST_OPS = "import unittest\n\nfrom calc.ops import double\n\n\nclass T(unittest.TestCase):\n"
UNITTEST_OPS += "    def test_double(self):\n        self.assertEqual(double(2), 4)\n"


def _case(
    repo: Repo,
    case_id: str,
    base: dict[str, str],
    fix: dict[str, str],
    f2p: str,
    split: str,
    delete: tuple[str, ...] = (),
) -> dict[str, Any]:
    buggy = repo.commit(base)
    fixed = repo.commit(fix, delete=delete)
    return {
        "id": case_id,
        "format": "commit",
        "split": split,
        "repo": str(repo.path),
        "buggy": buggy,
        "fixed": fixed,
        "tests": ["tests"],
        "fail_to_pass": [f2p],
        "python": sys.executable,
        "test_command": ["-p", "no:randomly"],
    }


def _write_cases(where: pathlib.Path) -> pathlib.Path:
    rows = [
        _case(Repo(where / "calc"), "calc-half", PKG, FIX, "tests/test_half.py::test_half", "tuning"),
        _case(Repo(where / "slug"), "text-slug", SLUG_B, SLUG_FIX, "tests/test_space.py::test_space", "held-out"),
    ]
    path = where / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def cases(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    from conftest import GIT_ENV

    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    return _write_cases(tmp_path)


@pytest.fixture(scope="module")
def ab_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], pathlib.Path, pathlib.Path]:
    """The two cases through both arms, once for the module: the command, its --out and --corpus.
    The ablation test resumes a copy of it, so only the ablated arm's runs are new there."""
    from conftest import GIT_ENV

    where = tmp_path_factory.mktemp("ab")
    with pytest.MonkeyPatch.context() as mp:
        for key, value in GIT_ENV.items():
            mp.setenv(key, value)
        corpus_file = _write_cases(where)
    out = where / "ab"
    args = ["ab", "--corpus", str(corpus_file), "--out", str(out), "--cache", str(where / "cache")]
    assert main(args) == 0
    return args, out, corpus_file


def test_the_candidates_are_derived_from_the_real_fix(cases: pathlib.Path, tmp_path: pathlib.Path) -> None:
    (case, _) = corpus.load(cases)
    built = corpus.build(case, tmp_path / "work", tmp_path / "cache")
    found, missing = derive.candidates(built)
    assert [c.name for c in found] == list(derive.NAMES) and missing == []
    truth = {c.name: (c.truth, c.tamper) for c in found}
    assert truth["fix"] == ("accept", False) and truth["test-without-fix"] == ("reject", False)
    assert truth["fix-plus-skip"] == ("reject", True) and truth["fix-plus-weakened-assert"] == ("reject", True)
    weak = next(c for c in found if c.name == "fix-plus-weakened-assert")
    assert "assert True" in corpus.git(built.path, "show", "%s:tests/test_ops.py" % weak.sha)
    skip = next(c for c in found if c.name == "fix-plus-skip")
    assert "@pytest.mark.skip" in corpus.git(built.path, "show", "%s:tests/test_ops.py" % skip.sha)


def test_ab_runs_both_arms_reports_the_decision_and_resumes(
    ab_run: tuple[list[str], pathlib.Path, pathlib.Path], capsys: pytest.CaptureFixture[str]
) -> None:
    args, out, _corpus = ab_run
    doc = json.loads((out / "ab.json").read_text())
    schema = json.loads((pathlib.Path(corpus.__file__).parent / "ab.schema.json").read_text())
    jsonschema.validate(doc, schema)
    runs = [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*/*/*.json"))]
    assert len(runs) == 2 * 5 * 2  # cases x candidates x arms
    battery = {(r["case"], r["candidate"]): r for r in runs if r["arm"] == "17battery"}
    naive = {(r["case"], r["candidate"]): r for r in runs if r["arm"] == "pytestbool"}
    for key, run in battery.items():  # the battery is right on every real fix and derived candidate
        assert run["accepted"] == (run["truth"] == "accept"), (key, run["verdict"], run["record"]["verdict"])
    # the naive judge lays the trusted tests back and cannot see the tampering: it accepts it
    assert all(naive[(c, "fix-plus-skip")]["accepted"] for c in ("calc-half", "text-slug"))
    assert all(not naive[(c, "test-without-fix")]["accepted"] for c in ("calc-half", "text-slug"))
    report = (out / "ab.md").read_text()
    assert "held-out" in report and "evidence-typing coverage" in report.lower()
    names = {item["name"] for item in doc["decision"]["items"]}
    assert {"evidence_typing_coverage", "bug_discriminating_rate"} <= names
    # started again: nothing is run twice, and the report is written again
    stamps = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/*/*.json")}
    assert main(args) == 0
    assert {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/*/*.json")} == stamps
    said = capsys.readouterr()
    assert "done before, skipped" in said.err and "report in" in said.out


def test_a_run_is_judged_again_when_what_it_judged_changed(
    ab_run: tuple[list[str], pathlib.Path, pathlib.Path], tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Resuming reuses a run only for what it judged: a candidate derived otherwise since (another
    tree), or a run written before runs said what they judged, is judged again; the rest is not.
    A corrected case line is what no run judged: the case is built again and every candidate
    judged (checked on the keys: judging ten runs again shows nothing the two above do not)."""
    args, done, corpus_file = ab_run
    out = tmp_path / "ab"
    shutil.copytree(done, out)
    runs = out / "runs" / "calc-half"
    stale, legacy = runs / "fix-plus-skip" / "17battery.json", runs / "fix" / "pytestbool.json"
    judged = json.loads(stale.read_text())["judged"]
    write = {stale: {"judged": "0" * 40 + judged[40:]}, legacy: {}}
    for path, extra in write.items():
        row = {k: v for k, v in json.loads(path.read_text()).items() if k != "judged"}
        path.write_text(json.dumps({**row, **extra}))
    stamps = {p: p.stat().st_mtime_ns for p in runs.glob("*/*.json") if p not in write}
    again = ["ab", "--corpus", str(corpus_file), "--out", str(out), "--cases", "calc-half", *args[-2:]]
    assert main(again) == 0
    assert json.loads(stale.read_text())["judged"] == judged and json.loads(legacy.read_text())["judged"]
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert capsys.readouterr().err.count("changed since its run: judged again") == 2
    orphan = runs / "no-longer-derived" / "17battery.json"  # a candidate an older derivation gave
    orphan.parent.mkdir()
    orphan.write_text(json.dumps({**json.loads(stale.read_text()), "candidate": "no-longer-derived"}))
    assert len(harness.finished(out)) == 2 * 5 * 2
    # the case line corrected (another test command): no run of the case judged what it asks
    line = next(case for case in corpus.load(corpus_file) if case["id"] == "calc-half")
    corrected = {**line, "test_command": [*line["test_command"], "-q"]}
    marker, arms = runs / "candidates.json", harness.arms([], audit=False)
    assert harness._done(out, line, False, marker, arms) and not harness._done(out, corrected, False, marker, arms)
    judged = json.loads(marker.read_text())["judged"]
    tree = {name: key.split(":")[0] for name, key in judged.items()}
    assert all(harness._judged(corrected, False, tree[name]) != key for name, key in judged.items())


def test_a_corpus_line_that_is_not_a_case_is_one_line_of_bad_input(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "cases.jsonl"
    bad.write_text(json.dumps({"id": "x", "format": "commit", "repo": "r"}) + "\n")
    assert main(["ab", "--corpus", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "cases.jsonl:1: a commit case needs" in err and err.count("\n") == 1


def test_an_ablated_mechanism_is_kept_when_its_removal_costs_a_measure(
    ab_run: tuple[list[str], pathlib.Path, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    args, done, corpus_file = ab_run
    out = tmp_path / "ab"
    shutil.copytree(done, out)  # both arms already ran: only the ablated arm runs now
    ablated_args = ["ab", "--corpus", str(corpus_file), "--out", str(out), "--cases", "text-slug"]
    assert main([*ablated_args, "--ablate", "tamper", *args[-2:]]) == 0
    doc = json.loads((out / "ab.json").read_text())
    (row,) = doc["ablation"]
    assert row["mechanism"] in ("tamper", "ablate:tamper") and row["delete"] is False
    ablated = [json.loads(p.read_text()) for p in (out / "runs").glob("text-slug/*/ablate-tamper.json")]
    skip = next(r for r in ablated if r["candidate"] == "fix-plus-skip")
    assert skip["record"]["invocation"]["ablate"] == ["tamper"]
    assert not [d for d in skip["record"]["detections"] if d["kind"] == "tamper"]  # nothing protected it


@pytest.mark.parametrize(
    ("ablate", "audit", "says"),
    [
        (["nonsense"], False, "not a mechanism"),
        (["audit"], False, "add --audit"),
    ],
)
def test_ablations_that_cannot_run_are_refused_before_any_run(ablate: list[str], audit: bool, says: str) -> None:
    with pytest.raises(BadInput, match=says):
        harness.arms(ablate, audit)


def test_all_ablations_are_the_built_ones() -> None:
    assert harness.arms(["all"], audit=False) == [
        "17battery",
        "pytestbool",
        *(
            "ablate:%s" % m
            for m in ("selection", "tamper", "flake-policy", "pinning", "steering", "typing", "baseline-replay")
        ),
    ]


def test_a_unittest_style_check_is_weakened_too(cases: pathlib.Path, tmp_path: pathlib.Path) -> None:
    case = json.loads(cases.read_text().splitlines()[0])
    repo = Repo(tmp_path / "ut")
    case = _case(repo, "ut", {**PKG, "tests/test_ops.py": UNITTEST_OPS}, FIX, case["fail_to_pass"][0], "tuning")
    built = corpus.build(case, tmp_path / "work", tmp_path / "cache")
    found, missing = derive.candidates(built)
    weak = next(c for c in found if c.name == "fix-plus-weakened-assert")
    assert missing == [] and "self.assertTrue(True)" in corpus.git(
        built.path, "show", "%s:tests/test_ops.py" % weak.sha
    )


def _rewritten(cases: pathlib.Path, tmp_path: pathlib.Path, b_ops: str, c_ops: str | None) -> corpus.Built:
    """The calc case with ``b_ops`` as B's tests/test_ops.py, which the fix rewrites as ``c_ops``
    (None: deletes): C changes every test file of B, so no file of B comes first."""
    f2p = json.loads(cases.read_text().splitlines()[0])["fail_to_pass"][0]
    base = {**PKG, "tests/test_ops.py": b_ops}
    fix, delete = ({**FIX, "tests/test_ops.py": c_ops}, ()) if c_ops is not None else (FIX, ("tests/test_ops.py",))
    case = _case(Repo(tmp_path / "rw"), "rw", base, fix, f2p, "tuning", delete)
    return corpus.build(case, tmp_path / "work", tmp_path / "cache")


def test_a_test_only_c_brought_into_a_file_of_b_is_not_attacked(cases: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """C turns B's unittest class into functions and keeps one test of B: only that one is skipped
    or weakened, though C's new tests (a method of B made a function among them) come first."""
    kept = "def test_twice():\n    assert double(3) == 6\n"
    c_ops = "from calc.ops import double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n" + kept
    built = _rewritten(cases, tmp_path, UNITTEST_OPS + "\n\n" + kept, c_ops)
    found, missing = derive.candidates(built)
    assert missing == []
    derived = {c.name: corpus.git(built.path, "show", "%s:tests/test_ops.py" % c.sha) for c in found}
    assert derived["fix-plus-weakened-assert"] == c_ops.replace("assert double(3) == 6", "assert True").strip()
    assert '@pytest.mark.skip(reason="slow")\ndef test_twice' in derived["fix-plus-skip"]
    assert derived["fix-plus-skip"].count("@pytest.mark.skip") == 1


@pytest.mark.parametrize("c_ops", [PKG["tests/test_ops.py"], None], ids=["method-made-function", "file-deleted"])
def test_without_a_test_b_had_the_attacks_are_not_derived(
    cases: pathlib.Path, tmp_path: pathlib.Path, c_ops: str | None
) -> None:
    """C turns B's only test, a unittest method, into a function of the same name (not B's test),
    or deletes its file."""
    built = _rewritten(cases, tmp_path, UNITTEST_OPS, c_ops)
    found, missing = derive.candidates(built)
    assert [c.name for c in found] == ["fix", "fix-without-test", "test-without-fix"]
    assert missing == [
        "fix-plus-skip: no undecorated test function B already had",
        "fix-plus-weakened-assert: no assertion in a test B already had",
    ]


def test_without_pinning_the_tests_see_the_runners_environment(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reproducer that passes only where the environment leaks in: pinned, it fails on C."""
    monkeypatch.setenv("http_proxy", "proxy.invalid")
    reads_env = (
        "import os\n\nfrom calc.ops import half\n\n\ndef test_half():\n"
        "    assert half(4) == 2 and os.environ.get('http_proxy') == 'proxy.invalid'\n"
    )
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, "tests/test_half.py": reads_env})
    verdicts = {}
    for extra in ((), ("--ablate", "pinning")):
        out = tmp_path / ("e%d.json" % len(extra))
        main(["certify", "--repo", str(repo.path), "--baseline", base, "--candidate", cand, "--out", str(out), *extra])
        doc = json.loads(out.read_text())
        verdicts[extra] = (doc["verdict"]["verdict"], doc["pinning"]["network"])
    assert verdicts[()][0] == "REJECTED" and verdicts[()][1] != "none"
    assert verdicts[("--ablate", "pinning")] == ("CERTIFIED", "none")


def _sdist(where: pathlib.Path, name: str, files: dict[str, str | bytes]) -> None:
    """A source distribution ``name``.tar.gz holding ``files`` under its top directory."""
    import tarfile

    top = where / name
    for rel, text in files.items():
        path = top / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with tarfile.open(where / (name + ".tar.gz"), "w:gz") as tar:
        tar.add(top, arcname=name)
    shutil.rmtree(top)


def test_an_sdist_case_commits_no_bytecode_or_patch_leftovers(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sdists ship what their authors' trees held; B and C hold only what the case is about."""
    from conftest import GIT_ENV

    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    junk: dict[str, str | bytes] = {"calc/__pycache__/ops.cpython-311.pyc": b"\0junk", "calc/ops.py.orig": "old"}
    junk["tests/x.rej"] = "hunk"
    releases: tuple[tuple[str, dict[str, str | bytes]], ...] = (
        ("1.0", {**PKG, **junk}),
        ("1.1", {**PKG, **FIX, **junk}),
    )
    for version, files in releases:
        (tmp_path / "cache" / "sdists" / ("calc-%s" % version)).mkdir(parents=True)
        _sdist(tmp_path / "cache" / "sdists" / ("calc-%s" % version), "calc-%s" % version, files)
    monkeypatch.setattr(corpus, "_venv", lambda *_a: pathlib.Path(sys.executable))  # no install
    case = {
        "id": "calc-1.0-1.1",
        "format": "sdist",
        "package": "calc",
        "baseline_version": "1.0",
        "candidate_version": "1.1",
        "changed_source_files": ["calc/ops.py"],
        "tests_dir": ["tests"],
        "test_command": ["tests"],
        "fail_to_pass": ["tests/test_half.py::test_half"],
    }
    built = corpus.build(case, tmp_path / "work", tmp_path / "cache")
    for commit in (built.baseline, built.candidate):
        tree = corpus.git(built.path, "ls-tree", "-r", "--name-only", commit).split("\n")
        assert not [f for f in tree if f.endswith((".pyc", ".orig", ".rej")) or "__pycache__" in f], tree
        assert "calc/ops.py" in tree and "tests/test_ops.py" in tree
    assert corpus.git(built.path, "diff", "--name-only", built.baseline, built.candidate).split() == [
        "calc/ops.py",
        "tests/test_half.py",
    ]


def test_a_cached_venv_counts_only_once_its_install_finished(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A benchmark interrupted while pip installed left a venv with an interpreter and no
    packages; the next run reused it and every certify failed ("has no pytest")."""
    made: list[pathlib.Path] = []
    codes: list[int] = []  # what each install returns, in turn

    def create(target: pathlib.Path, **_kw: object) -> None:
        made.append(target)
        (target / "bin").mkdir(parents=True, exist_ok=True)
        (target / "bin" / "python").write_text("")

    def run(cmd: list[str], **_kw: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(cmd, codes.pop(0), "", "no such package")

    monkeypatch.setattr(venv, "create", create)
    monkeypatch.setattr(subprocess, "run", run)
    cache = tmp_path / "cache"
    codes.append(1)
    with pytest.raises(ToolFailed, match="pip install pytest: no such package"):
        corpus._venv(cache, ["pytest"], ())
    assert not any(cache.glob("venv-*"))  # a failed install leaves nothing behind
    codes.append(0)
    python = corpus._venv(cache, ["pytest"], ())
    assert corpus._venv(cache, ["pytest"], ()) == python and len(made) == 2  # made once
    (python.parent.parent / "complete").unlink()  # interrupted while installing: no mark
    codes.append(0)
    assert corpus._venv(cache, ["pytest"], ()) == python and len(made) == 3  # made again
