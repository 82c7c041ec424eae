"""Is green worth anything: the suite-strength audit and the reproducer-strength check.

Unit tests of the mutant generation (mutmut's operators, scoped to lines) and the seeded sample;
end to end, ``certify --audit`` on real git repositories made in a temp dir, the record validated
against the shipped schema and the kill rates read back from the store.
"""

from __future__ import annotations

import json
import pathlib
import py_compile
import sqlite3
import subprocess
import sys
from typing import Any

import jsonschema
import pytest
from conftest import FIX, PKG, Repo, certify

from runner import audit, mutants
from runner.cli import main
from runner.ladder import strength
from runner.sandbox import Sandbox

SOURCE = "def half(n):\n    return n // 2\n\n\ndef double(n):\n    return n * 2 + 0\n"


def test_mutants_come_from_mutmut_and_stay_on_the_lines_asked() -> None:
    made = mutants.generate("calc/ops.py", SOURCE, "double", {6})
    assert made, "mutmut's operators mutate `n * 2 + 0`"
    assert {m.line for m in made} == {6} and {m.function for m in made} == {"double"}
    for m in made:
        assert m.source != SOURCE and m.source.splitlines()[1] == "    return n // 2"  # half untouched
        removed, added = m.diff.splitlines()[1:]
        assert removed == "-    return n * 2 + 0" and added.startswith("+    return ") and added != "+" + removed[1:]
    assert "+    return n / 2 + 0" in {m.diff.splitlines()[-1] for m in made}
    assert mutants.engine().startswith("mutmut 3.")


def test_the_sample_is_seeded_and_keeps_every_function() -> None:
    many = mutants.generate("calc/ops.py", SOURCE, "double", {6})
    few = mutants.generate("calc/ops.py", SOURCE, "half", {2})
    assert len(many) > 2 and few
    picked = mutants.sample([many, few], 3, seed=7)
    assert len(picked) == 3 and any(m.function == "half" for m in picked)
    assert picked == mutants.sample([many, few], 3, seed=7)
    assert mutants.sample([many, few], 100, seed=7).__len__() == len(many) + len(few)


def test_a_laid_mutant_is_never_run_from_the_last_ones_bytecode(tmp_path: pathlib.Path) -> None:
    module = tmp_path / "ops.py"
    module.write_text("X = 1\n")
    compiled = py_compile.compile(str(module))
    assert compiled is not None
    cached = pathlib.Path(compiled)
    assert cached.is_file()
    audit._lay(module, b"X = 2\n")  # same size, likely the same second: the .pyc would match
    assert module.read_text() == "X = 2\n" and not cached.exists()


# -- end to end ---------------------------------------------------------------------------------

STRONG = "from calc.ops import half\n\n\ndef test_half():\n    assert half(4) == 2\n    assert half(5) == 2\n"
#: B raises on even numbers; the "fix" returns an object equal to anything.
B_RAISES = {
    "calc/__init__.py": "",
    "calc/ops.py": "def half(n):\n    if n % 2 == 0:\n        raise ValueError(n)\n    return n // 2\n",
    "tests/test_ops.py": "from calc.ops import half\n\n\ndef test_odd():\n    assert half(3) == 1\n",
    "pyproject.toml": PKG["pyproject.toml"],
}
ALWAYS_EQUAL_FIX = {
    "calc/ops.py": (
        "class Result:\n    def __init__(self, value):\n        self.value = value\n\n"
        "    def __eq__(self, other):\n        return True\n\n\n"
        "def half(n):\n    if n % 2 == 0:\n        return Result(n // 2)\n    return n // 2\n"
    ),
    "tests/test_even.py": "from calc.ops import half\n\n\ndef test_even():\n    assert half(4) == 2\n",
}


def _store_rows(repo: Repo) -> list[tuple[Any, ...]]:
    path = repo.path / ".git" / "evidence" / "store.sqlite3"
    with sqlite3.connect(path) as db:
        return list(db.execute("SELECT path, function, run, killed FROM kill_rates"))


def test_certify_audit_records_kill_rates_per_function_and_stores_them(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any]
) -> None:
    base = repo.commit(PKG)
    fixed = repo.commit({**FIX, "tests/test_half.py": STRONG})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fixed, "--audit")
    assert doc is not None and code == 0, doc and doc["verdict"]
    jsonschema.validate(doc, schema)
    tiers = [t["tier"] for t in doc["tiers"]]
    assert tiers.index("T5") < tiers.index("audit") < tiers.index("T6")
    rung = next(t for t in doc["tiers"] if t["tier"] == "audit")
    suite = doc["audit"]["suite"]
    assert rung["status"] == "passed" and rung["run"] == suite["mutants_run"] > 0
    (half,) = suite["functions"]
    assert (half["path"], half["function"], half["tests"]) == ("calc/ops.py", "half", 1)
    assert half["killed"] + len(half["survivors"]) == half["run"] == half["mutants"]
    assert half["killed"] >= 1  # `n // 3` gives half(4) == 1
    assert suite["modules"]["calc/ops.py"]["kill_rate"] == half["kill_rate"]
    assert doc["audit"]["reproducer"]["killed"] == 1  # the reproducer notices a broken fix
    assert _store_rows(repo) == [("calc/ops.py", "half", half["run"], half["killed"])]
    assert doc["invocation"]["audit"] is True


def test_a_kill_rate_under_the_threshold_makes_the_verdict_inconclusive_with_its_survivors(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    base = repo.commit(PKG)
    fixed = repo.commit(FIX)  # half(4) == 2 alone: `n / 2` gives 2.0, which equals 2
    args = ("--baseline", base, "--candidate", fixed, "--audit", "--min-kill-rate", "1")
    code, doc = certify(repo, tmp_path / "e.json", *args)
    assert doc is not None and code == 3
    assert doc["verdict"]["verdict"] == "INCONCLUSIVE" and doc["verdict"]["halted_at"] == "audit"
    assert "return n / 2" in doc["verdict"]["reasons"][0]
    survivors = doc["audit"]["suite"]["functions"][0]["survivors"]
    assert any(s["diff"].endswith("+    return n / 2") for s in survivors)


def test_a_reproducer_no_mutant_of_the_fix_can_fail_is_weak_evidence(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(B_RAISES)
    fixed = repo.commit(ALWAYS_EQUAL_FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fixed, "--audit")
    assert doc is not None and code == 3
    assert any(r["bug_discriminating"] for r in doc["results"])  # it fails on B, passes on C...
    weak = [d for d in doc["detections"] if d["kind"] == "weak_reproducer" and d["detail"] == "survives_mutants"]
    assert len(weak) == 1 and weak[0]["path"] == "calc/ops.py"  # ...and on every mutant of the fix
    reproducer = doc["audit"]["reproducer"]
    assert reproducer["run"] >= 1 and reproducer["killed"] == 0
    assert reproducer["tests"] == ["tests/test_even.py::test_even"]
    assert doc["verdict"]["verdict"] == "INCONCLUSIVE"


@pytest.mark.parametrize("option", [["--min-kill-rate", "0.5"], ["--critical", "calc.ops"]])
def test_audit_options_need_the_audit(repo: Repo, tmp_path: pathlib.Path, option: list[str]) -> None:
    base = repo.commit(PKG)
    fixed = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fixed, *option)
    assert code == 2 and doc is None


# -- evidence-runner audit ----------------------------------------------------------------------


def test_the_audit_command_reports_a_revision_and_keeps_the_history(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.commit(PKG)
    fixed = repo.commit(FIX)  # half(4) == 2 alone: blind to `n / 2`
    out = tmp_path / "audit.json"
    assert main(["audit", "--repo", str(repo.path), "--rev", fixed, "--out", str(out)]) == 0
    first = json.loads(out.read_text())
    assert first["format"] == "audit-1" and first["rev"] == fixed and first["before"] == {}
    (half,) = first["audit"]["functions"]
    assert (half["function"], half["tests"], half["run"]) == ("half", 1, half["mutants"])
    assert half["killed"] < half["run"] and half["survivors"][0]["diff"].endswith("+    return n / 2")
    said = capsys.readouterr()
    assert "AUDITED: kill rate" in said.out and "calc/ops.py::half" in said.err
    # the whole module, and what the store remembers of the last audit
    args = ["audit", "--repo", str(repo.path), "--rev", fixed, "--critical", "calc.ops", "--out", str(out)]
    assert main([*args, "--min-kill-rate", "1"]) == 3
    second = json.loads(out.read_text())
    assert {f["function"] for f in second["audit"]["functions"]} == {"half", "double"}
    assert second["before"]["calc/ops.py"]["kill_rate"] == half["kill_rate"]
    assert "WEAK: kill rate" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ((), "has no parent"),
        (("--critical", "calc.missing"), "--critical calc.missing is neither a module nor a file"),
    ],
)
def test_the_audit_command_refuses_what_it_cannot_audit(
    repo: Repo, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], says: str
) -> None:
    root = repo.commit(PKG)
    assert main(["audit", "--repo", str(repo.path), "--rev", root, *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "recorded suite run" not in err


def test_mutants_are_rendered_only_when_read() -> None:
    made = mutants.generate("calc/ops.py", SOURCE, "double", {6})
    assert made and all("source" not in vars(m) for m in made)  # nothing rendered yet
    first = made[0]
    assert first.line == 6 and "source" in vars(first) and all("source" not in vars(m) for m in made[1:])


def test_a_changed_class_owns_its_own_statements_not_its_unchanged_methods() -> None:
    source = (
        "class Box:\n    size = 3\n\n    def grow(self):\n        return self.size + 1\n\n"
        "    def shrink(self):\n        return self.size - 1\n"
    )
    every = list(strength.definitions(source).values())
    owned = {s.qualname: sorted(lines) for s, lines in strength.own_lines(every, range(1, 9)).items()}
    assert owned == {"Box": [1, 2, 3, 6], "Box.grow": [4, 5], "Box.shrink": [7, 8]}


def test_a_mutant_test_process_has_its_memory_capped(tmp_path: pathlib.Path) -> None:
    limit = 3 << 30
    pinned = Sandbox(1, None, None, "socket_guard", memory=limit)
    probe = "import resource; print(resource.getrlimit(resource.RLIMIT_AS)[0])"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, preexec_fn=pinned.preexec)
    assert int(out.stdout) == limit
    assert audit.memory_share(1) >= 1 << 30 and audit.memory_share(4) <= audit.memory_share(1)


BREAKS_IMPORT = {
    "calc/__init__.py": "",
    "calc/ops.py": 'class Box:\n    size = int("3")\n\n    def grow(self):\n        return self.size + 1\n',
    "tests/test_box.py": "from calc.ops import Box\n\n\ndef test_grow():\n    assert Box().grow() == 4\n",
    "pyproject.toml": PKG["pyproject.toml"],
}


def test_a_mutant_that_breaks_the_import_is_killed_by_no_test(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rev = repo.commit(BREAKS_IMPORT)
    out = tmp_path / "audit.json"
    assert main(["audit", "--repo", str(repo.path), "--rev", rev, "--critical", "calc.ops", "--out", str(out)]) == 0
    box = next(f for f in json.loads(out.read_text())["audit"]["functions"] if f["function"] == "Box")
    assert box["killed"] == box["run"] and box["survivors"] == []
    assert 1 <= box["untested"] < box["run"]  # `int("XX3XX")` breaks the import; `size = None` fails the test
    assert "killed (collection)" in capsys.readouterr().err
