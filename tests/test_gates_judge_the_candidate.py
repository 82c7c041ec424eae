"""Static gates judge what the candidate wrote: not what B already had, not trusted files, not docs.

Defect class: T1 halted real fixes on F821 findings B already had (untouched lines of a changed
file) and on findings inside trusted test files laid over by ``--tests-from``; T2 imported
``docs/conf.py`` (its Sphinx theme not installed) and rejected the fix.
"""

from __future__ import annotations

import pathlib

from conftest import FIX, PKG, Record, Repo, certify

from pytest_evidence import gitops
from pytest_evidence.model import Finding
from runner import findings
from runner.importgraph import owned_module

LEGACY = "\n\ndef legacy():\n    return undefined_legacy_name  # noqa-free: B has had this F821 for years\n"


def _tier(doc: Record | None, name: str) -> Record:
    assert doc is not None
    return next(t for t in doc["tiers"] if t["tier"] == name)


def test_a_lint_finding_b_already_had_is_a_warning_even_where_lines_shifted(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit({**PKG, "calc/ops.py": PKG["calc/ops.py"] + LEGACY})
    # The fix adds lines above legacy(): its finding moves down, in the same function.
    fixed = "import math\n\n\n" + FIX["calc/ops.py"] + LEGACY
    cand = repo.commit({**FIX, "calc/ops.py": fixed.replace("return n // 2", "return math.floor(n / 2)")})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    t1 = _tier(doc, "T1")
    assert t1["status"] == "passed" and code == 0, t1
    (old,) = [f for f in t1["findings"] if f["code"] == "F821"]
    assert not old["hard"] and old["message"].endswith("(also on the baseline)")


def test_the_same_finding_written_again_by_the_candidate_halts(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit({**PKG, "calc/ops.py": PKG["calc/ops.py"] + LEGACY})
    again = LEGACY.replace("legacy()", "legacy2()")  # same code and message, another function
    cand = repo.commit({**FIX, "calc/ops.py": FIX["calc/ops.py"] + LEGACY + again})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    t1 = _tier(doc, "T1")
    assert (code, t1["status"]) == (1, "failed")
    hard = [f for f in t1["findings"] if f["hard"]]
    assert [(f["code"], f["line"]) for f in hard] == [("F821", 14)]  # the one in legacy2()


def test_a_finding_in_a_trusted_test_file_is_not_the_candidates(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(PKG)
    trusted_test = FIX["tests/test_half.py"] + "\n\ndef _helper():\n    return not_defined_in_the_trusted_test\n"
    trusted = repo.commit({**FIX, "tests/test_half.py": trusted_test}, "the release's tests")
    repo.git("checkout", "-q", base)
    cand = repo.commit({"calc/ops.py": FIX["calc/ops.py"]}, "the fix alone")
    reproducer = ("--reproducer", "tests/test_half.py::test_half")
    code, doc = certify(
        repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--tests-from", trusted, *reproducer
    )
    t1 = _tier(doc, "T1")
    assert (code, t1["status"]) == (0, "passed"), (doc or {}).get("verdict")
    (finding,) = [f for f in t1["findings"] if f["code"] == "F821"]
    assert finding["path"] == "tests/test_half.py" and not finding["hard"]
    assert finding["message"].endswith("(in a trusted file, not the candidate's)")


def test_docs_and_scripts_are_byte_compiled_not_imported(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(
        {**PKG, "docs/conf.py": "import sphinx_no_such_theme\n", "scripts/release.py": "raise SystemExit(1)\n"}
    )
    docs = "import sphinx_no_such_theme\n\nhtml_theme = 'no_such_theme'\n"
    cand = repo.commit({**FIX, "docs/conf.py": docs, "scripts/release.py": "raise SystemExit(2)\n"})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    t2 = _tier(doc, "T2")
    assert (code, t2["status"]) == (0, "passed"), t2
    assert doc is not None
    checks = sorted(r["test_id"] for r in doc["results"] if r["test_id"].startswith("T2::"))
    assert checks == ["T2::compile::docs/conf.py", "T2::compile::scripts/release.py", "T2::import::calc/ops.py"]


def test_only_modules_the_library_owns_are_imported(tmp_path: pathlib.Path) -> None:
    for path in ("src/pkg/__init__.py", "src/pkg/sub/__init__.py", "src/pkg/sub/m.py", "docs/conf.py", "setup.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    (tmp_path / "single.py").write_text("")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "demo.py").write_text("")
    roots = ["", "src"]
    owned = {p: owned_module(tmp_path, p, roots) for p in ("src/pkg/sub/m.py", "src/pkg/__init__.py", "single.py")}
    assert owned == {"src/pkg/sub/m.py": "pkg.sub.m", "src/pkg/__init__.py": "pkg", "single.py": "single"}
    assert [owned_module(tmp_path, p, roots) for p in ("docs/conf.py", "setup.py", "examples/demo.py")] == [None] * 3


def _f(path: str, line: int, code: str = "F821", message: str = "Undefined name `x`") -> Finding:
    return Finding("ruff", path, line, 1, code, message, True)


def test_baseline_findings_are_matched_by_symbol_and_counted() -> None:
    b_source = "def a():\n    x\n\n\ndef b():\n    x\n"
    c_source = "import os\n\n\ndef a():\n    x\n\n\ndef b():\n    x\n    x\n"
    got = findings.judge(
        [_f("m.py", 5), _f("m.py", 9), _f("m.py", 10)],
        [_f("m.py", 2), _f("m.py", 6)],
        lambda _p: c_source,
        lambda _p: b_source,
    )
    assert [f.hard for f in got] == [False, False, True]  # b() had one; the second in b() is new
    assert findings.enclosing([], 3) == "<module>"


def test_a_mypy_finding_about_a_module_the_environment_lacks_is_not_the_candidates() -> None:
    """svcs 26.1.0's optional ``aiohttp`` integration, with aiohttp not installed in the target."""
    missing = Finding("mypy", "src/svcs/aiohttp.py", 11, 1, "import-not-found", "Cannot find implementation", True)
    unused = Finding("mypy", "src/svcs/aiohttp.py", 45, 1, "unused-ignore", 'Unused "type: ignore" comment', True)
    anyret = Finding("mypy", "src/svcs/aiohttp.py", 52, 1, "no-any-return", "Returning Any from function", True)
    elsewhere = Finding("mypy", "src/svcs/flask.py", 20, 1, "arg-type", "Argument 1 has incompatible type", True)
    got = findings.judge([missing, unused, anyret, elsewhere], [], lambda _p: "", lambda _p: "")
    assert [f.hard for f in got] == [False, False, False, True]  # the file's types rest on Any
    assert "imports a module the target environment lacks" in got[0].message


def test_test_data_that_must_not_parse_is_not_parsed_by_t0(repo: Repo, tmp_path: pathlib.Path) -> None:
    """tomli's shape: a parser's fix adds an invalid-input fixture under tests/."""
    base = repo.commit(PKG)
    fixtures = {"tests/data/invalid-day.toml": "d = 2026-13-45\n", "tests/data/broken.json": "{nope\n"}
    cand = repo.commit({**FIX, **fixtures, "tests/data/bad_syntax.py": "def (:\n"})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    t0 = _tier(doc, "T0")
    assert (code, t0["status"]) == (0, "passed"), t0
    assert doc is not None
    parsed = sorted(r["test_id"] for r in doc["results"] if r["test_id"].startswith("T0::"))
    assert parsed == ["T0::parse::calc/ops.py", "T0::parse::tests/test_half.py"]


def test_an_import_failure_b_already_had_is_a_warning(repo: Repo, tmp_path: pathlib.Path) -> None:
    """A module whose dependency the target lacks fails to import on B as on C: not the candidate's."""
    extra = "import no_such_dependency_xyz\n\n\ndef pretty(n):\n    return str(n)\n"
    base = repo.commit({**PKG, "calc/extra.py": extra})
    cand = repo.commit({**FIX, "calc/extra.py": extra.replace("str(n)", "'%d' % n")})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    t2 = _tier(doc, "T2")
    assert (code, t2["status"]) == (0, "passed"), t2
    (finding,) = [f for f in t2["findings"] if f["check"] == "import"]
    assert finding["path"] == "calc/extra.py" and not finding["hard"]
    assert "No module named 'no_such_dependency_xyz'" in finding["message"]
    assert finding["message"].endswith("(also on the baseline)")


#: A mypy configuration the repository's own code does not pass: ``strict`` over untyped code.
STRICT = {"setup.cfg": "[mypy]\nstrict = True\n"}


def test_mypy_errors_are_warnings_where_b_fails_the_repositorys_own_configuration(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """typeguard 2.13: ``strict = true`` in setup.cfg, 133 errors on B; the fix's new lines add 3 of
    the same kinds. The project does not hold its code to that configuration: nor is the fix."""
    base = repo.commit({**PKG, **STRICT})
    fixed = FIX["calc/ops.py"] + "\n\ndef third(n):\n    return n // 3\n\n\ndef use():\n    return third(9)\n"
    cand = repo.commit({**FIX, "calc/ops.py": fixed})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    t2 = _tier(doc, "T2")
    assert t2["status"] == "passed" and code == 0, t2
    assert "mypy not enforced: B has" in t2["note"]
    assert t2["findings"] and not any(f["hard"] for f in t2["findings"] if f["check"] == "mypy")


def test_a_new_mypy_error_halts_where_b_passes_the_configuration(repo: Repo, tmp_path: pathlib.Path) -> None:
    ops = "def half(n: int) -> int:\n    return n // 2 + 1\n\n\ndef double(n: int) -> int:\n    return n * 2\n"
    typed = {"calc/ops.py": ops}
    base = repo.commit({**PKG, **STRICT, **typed})
    bad = typed["calc/ops.py"].replace("n // 2 + 1", "n // 2") + "\n\ndef third(n: int) -> int:\n    return str(n)\n"
    cand = repo.commit({**FIX, "calc/ops.py": bad})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    t2 = _tier(doc, "T2")
    assert (code, t2["status"]) == (1, "failed"), t2
    assert doc is not None
    assert [t["tier"] for t in doc["tiers"] if t["status"] != "not_run"] == ["T0", "T1", "T2"]


def _typed_error(repo: Repo) -> tuple[str, str]:
    """B passes ``strict``; C adds a function returning ``str`` where it says ``int``."""
    typed = "def half(n: int) -> int:\n    return n // 2 + 1\n\n\ndef double(n: int) -> int:\n    return n * 2\n"
    base = repo.commit({**PKG, **STRICT, "calc/ops.py": typed})
    bad = typed.replace("n // 2 + 1", "n // 2") + "\n\ndef third(n: int) -> int:\n    return str(n)\n"
    return base, repo.commit({**FIX, "calc/ops.py": bad})


def _t2_answer(doc: Record | None) -> tuple[str, list[tuple[object, ...]]]:
    t2 = _tier(doc, "T2")
    return t2["status"], sorted((f["path"], f["line"], f["code"], f["hard"]) for f in t2["findings"])


def _mypy_cache(repo: Repo) -> pathlib.Path:
    common = gitops.common_dir(str(repo.path))
    assert common is not None
    return pathlib.Path(common) / "evidence" / "store.mypy-cache"


def test_mypys_cache_is_kept_beside_the_store_and_answers_as_a_fresh_run(repo: Repo, tmp_path: pathlib.Path) -> None:
    """The typeshed and the installed packages are most of a small project's mypy run: their
    analysis is kept between runs, and the warm run's findings are the cold run's."""
    base, cand = _typed_error(repo)
    cold = certify(repo, tmp_path / "cold.json", "--baseline", base, "--candidate", cand)
    databases = list(_mypy_cache(repo).glob("*/*.db"))
    assert databases, "no mypy cache beside the store"
    warm = certify(repo, tmp_path / "warm.json", "--baseline", base, "--candidate", cand)
    assert cold[0] == warm[0] == 1
    assert _t2_answer(cold[1]) == _t2_answer(warm[1])
    assert _t2_answer(warm[1])[0] == "failed" and ("calc/ops.py", 10, "return-value", True) in _t2_answer(warm[1])[1]


def test_a_corrupt_mypy_cache_is_not_the_tiers_error(repo: Repo, tmp_path: pathlib.Path) -> None:
    """A run killed while mypy wrote its cache leaves it unreadable, and mypy then crashes (exit 2):
    T2 asks again without the cache, answers as a fresh run would, and the cache is built anew."""
    base, cand = _typed_error(repo)
    fresh = certify(repo, tmp_path / "fresh.json", "--baseline", base, "--candidate", cand)
    for database in _mypy_cache(repo).glob("*/*.db"):
        database.write_bytes(b"not a database")
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert fresh[0] == 1 and (code, _t2_answer(doc)) == (1, _t2_answer(fresh[1]))
    rebuilt = list(_mypy_cache(repo).glob("*/*.db"))
    assert rebuilt and all(db.read_bytes().startswith(b"SQLite format 3") for db in rebuilt)


#: Rewrites its own module at import into a version mypy accepts.
SELF_HEALING = (
    "import pathlib as _p\n\n_f = _p.Path(__file__)\n_s = _f.read_text()\n"
    "if 'return ' + 'str(n)' in _s:\n    _f.write_text(_s.replace('return ' + 'str(n)', 'return n // 3'))\n\n\n"
)


def test_mypy_reads_the_changed_modules_before_any_candidate_code_runs(repo: Repo, tmp_path: pathlib.Path) -> None:
    """A changed module that rewrites itself at import into a version mypy accepts: mypy must have
    read it before the import probe (or a test session) ran it. Found by a review of an overlap
    of mypy with the probe and T3's collection, taken back (``docs/benchmarks.md``)."""
    typed = "def half(n: int) -> int:\n    return n // 2 + 1\n\n\ndef double(n: int) -> int:\n    return n * 2\n"
    base = repo.commit({**PKG, **STRICT, "calc/ops.py": typed})
    bad = typed.replace("n // 2 + 1", "n // 2") + "\n\ndef third(n: int) -> int:\n    return str(n)\n"
    cand = repo.commit({**FIX, "calc/ops.py": SELF_HEALING + bad})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    t2 = _tier(doc, "T2")
    assert (code, t2["status"]) == (1, "failed") and "return-value" in str(t2["findings"]), t2
