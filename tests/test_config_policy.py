"""Tightening is not tampering: pytest settings judged key by key, and only they are laid back.

Units of ``runner.config_policy`` (pure), the protected surface the trusted configuration
defines, and end to end on real repositories: an honest fix that tightens pytest's settings is
certified; one that bumps its version in ``pyproject.toml`` keeps that bump when its loosened
pytest section is laid back; one that deletes an example script named ``test_*.py`` outside
``testpaths`` is no tamper.
"""

from __future__ import annotations

import pathlib
import sys
from typing import Any

import pytest
from conftest import FIX, PKG, Repo, certify, validate

from runner import config_policy
from runner.config_policy import Change, classify, collection, effective, lay_back, options, read
from runner.integrity import verify_test_integrity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the runner supports 3.10
    import tomli as tomllib


def _pyproject(body: str) -> config_policy.Settings | None:
    return read("pyproject.toml", ('[project]\nname = "x"\n\n[tool.pytest.ini_options]\n' + body).encode())


def _changes(old: str, new: str) -> dict[str, Change]:
    return {c.key: c.change for c in classify(_pyproject(old), _pyproject(new)).changes}


BASE = 'testpaths = ["tests"]\naddopts = "-q"\nfilterwarnings = ["error", "ignore::DeprecationWarning"]\n'


@pytest.mark.parametrize(
    ("new", "key"),
    [
        (BASE.replace(', "ignore::DeprecationWarning"', ""), "filterwarnings"),  # an ignore: entry removed
        (BASE.replace('["error", ', '["error", "error::UserWarning", '), "filterwarnings"),  # error added
        (BASE + "xfail_strict = true\n", "xfail_strict"),
        (BASE + "strict = true\n", "strict"),  # pytest 9: every strict_* at once
        (BASE.replace('"-q"', '"-q --strict-markers"'), "addopts"),
        (BASE.replace('"-q"', '"-q --strict-config"'), "addopts"),
        (BASE.replace('"-q"', '"-q --strict"'), "addopts"),
        (BASE.replace('"-q"', '"-q -W error::RuntimeWarning"'), "addopts"),
        (BASE + 'minversion = "8.0"\n', "minversion"),
        (BASE + 'markers = ["slow: takes long"]\n', "markers"),
    ],
)
def test_tightening_a_pytest_setting_is_allowed(new: str, key: str) -> None:
    assert _changes(BASE, new) == {key: Change.TIGHTENED}
    assert not classify(_pyproject(BASE), _pyproject(new)).lay_back


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        (BASE, BASE.replace('["tests"]', '["tests/unit"]'), "testpaths"),  # fewer testpaths
        ('addopts = "-q"\n', 'addopts = "-q"\ntestpaths = ["tests/fast"]\n', "testpaths"),  # from everything
        (
            BASE + 'python_files = ["test_*.py", "check_*.py"]\n',
            BASE + 'python_files = ["check_*.py"]\n',
            "python_files",
        ),
        (BASE, BASE + 'python_files = ["test_fast_*.py"]\n', "python_files"),  # narrower than the default
        (BASE, BASE + 'python_classes = ["Check"]\n', "python_classes"),
        (BASE, BASE + 'python_functions = ["check_"]\n', "python_functions"),
        (BASE, BASE.replace('"-q"', '"-q -k not_slow"'), "addopts"),
        (BASE, BASE.replace('"-q"', '"-q --deselect tests/test_a.py::test_b"'), "addopts"),
        (BASE, BASE.replace('"-q"', '"-q --ignore=tests/test_a.py"'), "addopts"),
        (BASE, BASE.replace('"-q"', '"-q --ignore-glob=*slow*"'), "addopts"),
        (BASE, BASE.replace('"-q"', '"-q -p no:randomly"'), "addopts"),
        (BASE, BASE.replace('"-q"', '"-q -m fast"'), "addopts"),
        (BASE, BASE.replace('"-q"', '"-q --co"'), "addopts"),
        (BASE, BASE.replace('"-q"', '"-q tests/test_a.py"'), "addopts"),  # a path narrows the run
        (BASE, BASE.replace('"-q"', '"-q -o xfail_strict=false"'), "addopts"),
        (BASE, BASE.replace('["error", ', '["error", "ignore:.*:UserWarning", '), "filterwarnings"),
        (BASE, BASE.replace('"error", ', ""), "filterwarnings"),  # the error entry removed
        (BASE, BASE + 'norecursedirs = [".*", "build", "tests/slow"]\n', "norecursedirs"),
        (BASE, BASE + 'collect_ignore = ["tests/test_a.py"]\n', "collect_ignore"),
        (BASE + "xfail_strict = true\n", BASE + "xfail_strict = false\n", "xfail_strict"),
        (BASE + "xfail_strict = true\n", BASE, "xfail_strict"),
        (BASE + "strict = true\n", BASE + "strict = true\nstrict_markers = false\n", "strict_markers"),
        (BASE.replace('"-q"', '"-q --strict-markers"'), BASE, "addopts"),  # a strictness flag removed
    ],
)
def test_loosening_or_narrowing_a_pytest_setting_is_tamper(old: str, new: str, key: str) -> None:
    found = classify(_pyproject(old), _pyproject(new))
    assert {c.key: c.change for c in found.changes}[key] is Change.LOOSENED
    assert found.loosened and found.lay_back


@pytest.mark.parametrize(
    ("new", "key"),
    [
        (BASE + 'asyncio_mode = "auto"\n', "asyncio_mode"),  # a key the policy does not know
        (BASE.replace('"-q"', '"-v"'), "addopts"),  # output options: neither stricter nor looser
        (BASE.replace('"-q"', '"-q --strict-markers -v"'), "addopts"),  # stricter, and something else
        (BASE.replace('["tests"]', '["tests", "docs"]'), "testpaths"),  # more collected: not tightening
        (BASE + "xfail_strict = false\n", "xfail_strict"),  # no effect
        (BASE.replace('"ignore::DeprecationWarning"', '"default::DeprecationWarning"'), "filterwarnings"),
    ],
)
def test_a_change_the_policy_cannot_classify_is_unknown(new: str, key: str) -> None:
    found = classify(_pyproject(BASE), _pyproject(new))
    assert {c.key: c.change for c in found.changes} == {key: Change.UNKNOWN}
    assert found.lay_back and not found.loosened


def test_minversion_raised_is_tightening_lowered_is_unknown() -> None:
    assert _changes('minversion = "7.0"\n', 'minversion = "8.1"\n') == {"minversion": Change.TIGHTENED}
    assert _changes('minversion = "8.1"\n', 'minversion = "7.0"\n') == {"minversion": Change.UNKNOWN}


def test_an_unparseable_configuration_is_unknown() -> None:
    broken = read("pyproject.toml", b"[tool.pytest")
    assert broken is not None and broken.unparseable
    assert [c.change for c in classify(_pyproject(BASE), broken).changes] == [Change.UNKNOWN]


def test_settings_mean_the_same_in_ini_and_toml() -> None:
    """A configuration moved from setup.cfg to pyproject.toml, unchanged, is no change at all."""
    cfg = read("setup.cfg", b"[tool:pytest]\ntestpaths = tests\naddopts = -q --strict-markers\nxfail_strict = true\n")
    toml = read(
        "pyproject.toml",
        b'[tool.pytest]\ntestpaths = ["tests"]\naddopts = ["-q", "--strict-markers"]\nxfail_strict = true\n',
    )
    assert classify(cfg, toml).changes == ()


def test_settings_are_read_wherever_pytest_reads_them() -> None:
    assert read("tox.ini", b"[tox]\nenvlist = py\n") is None
    assert read("setup.cfg", b"[metadata]\nname = x\n") is None
    assert read("pytest.ini", b"") == config_policy.Settings({})  # dedicated: pytest's config even empty
    assert read(".pytest.ini", b"[pytest]\naddopts = -x\n") == config_policy.Settings({"addopts": "-x"})
    native = read("pyproject.toml", b"[tool.pytest]\nxfail_strict = true\n[tool.pytest.sub]\na = 1\n")
    assert native is not None and native.toml and native.values["xfail_strict"] is True
    assert read("pytest.toml", b'[pytest]\ntestpaths = ["t"]\n') == config_policy.Settings({"testpaths": ["t"]}, True)
    assert read("README.md", b"[pytest]\n") is None


def test_the_effective_file_follows_pytests_precedence() -> None:
    files = {
        "pyproject.toml": b'[tool.pytest.ini_options]\naddopts = "-q"\n',
        "tox.ini": b"[pytest]\naddopts = -x\n",
        "setup.cfg": b"[tool:pytest]\naddopts = -v\n",
    }
    assert effective(files.get)[0] == "pyproject.toml"
    assert effective({**files, "pytest.ini": b""}.get)[0] == "pytest.ini"
    assert effective({**files, "pytest.toml": b""}.get)[0] == "pytest.toml"
    assert effective({"pyproject.toml": b"[project]\n", "setup.cfg": files["setup.cfg"]}.get)[0] == "setup.cfg"
    assert effective({"pyproject.toml": b"[project]\n"}.get) == ("pyproject.toml", config_policy.Settings({}))
    nothing: dict[str, bytes] = {}
    assert effective(nothing.get) == (None, config_policy.Settings({}))


def test_addopts_words_become_options_with_their_values() -> None:
    words = ["-ra", "-pno:cacheprovider", "-p", "xdist", "-k", "not slow", "--tb=short", "--maxfail", "2", "-vx", "t"]
    assert options(words) == [
        ("-r", "a"),
        ("-p", "no:cacheprovider"),
        ("-p", "xdist"),
        ("-k", "not slow"),
        ("--tb", "short"),
        ("--maxfail", "2"),
        ("-v", None),
        ("-x", None),
        ("<arg>", "t"),
    ]


def test_collection_follows_the_trusted_configuration() -> None:
    settings = read(
        "pyproject.toml",
        b'[tool.pytest.ini_options]\ntestpaths = ["./tests/", "src/*/tests"]\npython_files = "tests_*.py"\n'
        b'python_classes = ["Check"]\npython_functions = "check_*"\n',
    )
    found = collection(settings)
    assert found.python_files == ("tests_*.py",) and found.python_classes == ("Check",)
    assert found.python_functions == ("check_*",)
    assert found.under_testpaths("tests/a/tests_x.py") and found.under_testpaths("src/pkg/tests/tests_y.py")
    assert not found.under_testpaths("examples/test_demo.py") and not found.under_testpaths("testsuite/x.py")
    assert collection(None).under_testpaths("anywhere/test_x.py")
    assert collection(None, ("check_*.py",)).python_files == ("check_*.py",)


# -- laying back only the pytest settings --------------------------------------------------------

PYPROJECT = """[project]
name = "calc"
version = "1.0"

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-q"

[tool.mypy]
strict = true
"""


def test_a_loosened_pyproject_gets_back_only_its_pytest_section() -> None:
    candidate = PYPROJECT.replace('"1.0"', '"1.1"').replace('"-q"', '"-q -k not_slow"')
    content, alone = lay_back("pyproject.toml", candidate.encode(), PYPROJECT.encode())
    assert alone and content is not None
    doc = tomllib.loads(content.decode())
    assert doc["project"]["version"] == "1.1" and doc["tool"]["mypy"] == {"strict": True}
    assert doc["tool"]["pytest"]["ini_options"] == {"testpaths": ["tests"], "addopts": "-q"}


@pytest.mark.parametrize(
    ("name", "trusted", "candidate", "expected"),
    [
        (  # pytest 9's native table and a subtable, between other tables
            "pyproject.toml",
            '[project]\nversion = "1"\n\n[tool.pytest]\naddopts = ["-q"]\n\n[tool.pytest.sub]\na = 1\n\n'
            "[tool.x]\nb = 2\n",
            '[project]\nversion = "2"\n\n[tool.pytest]\naddopts = ["-k", "x"]\n\n[tool.x]\nb = 2\n',
            '[project]\nversion = "2"\n\n[tool.pytest]\naddopts = ["-q"]\n\n[tool.pytest.sub]\na = 1\n\n'
            "[tool.x]\nb = 2\n",
        ),
        (  # the candidate added a pytest section the trusted file does not have
            "pyproject.toml",
            '[project]\nversion = "1"\n',
            '[project]\nversion = "2"\n\n[tool.pytest.ini_options]\naddopts = "-k x"\n',
            '[project]\nversion = "2"\n\n',
        ),
        (  # the candidate deleted the trusted pytest section
            "pyproject.toml",
            '[project]\nversion = "1"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
            '[project]\nversion = "2"\n',
            '[project]\nversion = "2"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
        ),
        (
            "setup.cfg",
            "[metadata]\nversion = 1\n\n[tool:pytest]\naddopts = -q\n\n[flake8]\nmax-line-length = 99\n",
            "[metadata]\nversion = 2\n\n[tool:pytest]\naddopts = -q -k x\n\n[flake8]\nmax-line-length = 99\n",
            "[metadata]\nversion = 2\n\n[tool:pytest]\naddopts = -q\n\n[flake8]\nmax-line-length = 99\n",
        ),
        (
            "tox.ini",
            "[tox]\nenvlist = py311\n\n[pytest]\naddopts = -q\n",
            "[tox]\nenvlist = py312\n\n[pytest]\naddopts = -q\n    -p no:randomly\n",
            "[tox]\nenvlist = py312\n\n[pytest]\naddopts = -q\n",
        ),
    ],
)
def test_the_pytest_section_is_spliced_into_the_candidates_shared_file(
    name: str, trusted: str, candidate: str, expected: str
) -> None:
    assert lay_back(name, candidate.encode(), trusted.encode()) == (expected.encode(), True)


def test_a_dedicated_file_is_laid_whole_and_an_impossible_splice_lays_the_trusted_file() -> None:
    assert lay_back("pytest.ini", b"[pytest]\naddopts = -k x\n", b"[pytest]\n") == (b"[pytest]\n", True)
    assert lay_back("pytest.ini", b"[pytest]\naddopts = -k x\n", None) == (None, True)  # a new one: removed
    # a line inside a multi-line string that looks like a table header: no line-based splice holds
    tricky = '[project]\nversion = "2"\n\n[tool.pytest.ini_options]\naddopts = """\n[x]\n"""\n'
    assert lay_back("pyproject.toml", tricky.encode(), PYPROJECT.encode()) == (PYPROJECT.encode(), False)
    assert lay_back("setup.cfg", None, b"[tool:pytest]\n") == (b"[tool:pytest]\n", False)  # deleted: restored


# -- the integrity check on a repository: what is protected, what is laid -------------------------


def _report(repo: Repo, files: dict[str, str], base_files: dict[str, str], delete: tuple[str, ...] = ()) -> Any:
    base = repo.commit(base_files)
    cand = repo.commit(files, delete=delete)
    return verify_test_integrity(str(repo.path), base, base, cand, ("test_*.py", "*_test.py"))


def test_a_version_bump_survives_when_the_pytest_settings_are_laid_back(repo: Repo) -> None:
    loosened = PYPROJECT.replace('"1.0"', '"1.1"').replace('"-q"', '"-q -k not_slow"')
    report = _report(repo, {"pyproject.toml": loosened}, {**PKG, "pyproject.toml": PYPROJECT})
    assert [(d.kind.value, d.detail, d.path) for d in report.detections] == [
        ("tamper", "pytest_config", "pyproject.toml")
    ]
    assert "-k not_slow" in report.detections[0].message
    laid = report.lay["pyproject.toml"]
    assert laid is not None and laid == PYPROJECT.replace('"1.0"', '"1.1"').encode()


def test_tightened_settings_stay_and_are_recorded(repo: Repo) -> None:
    tightened = PYPROJECT.replace('"-q"', '"-q --strict-markers"\nxfail_strict = true')
    report = _report(repo, {"pyproject.toml": tightened}, {**PKG, "pyproject.toml": PYPROJECT})
    found = [(d.kind.value, d.detail, d.path) for d in report.detections]
    assert found == [
        ("config_changed", "addopts", "pyproject.toml"),
        ("config_changed", "xfail_strict", "pyproject.toml"),
    ]
    assert "addopts tightened: allowed (addopts adds --strict-markers)" in report.detections[0].message
    assert report.lay == {}


def test_an_unknown_setting_is_laid_back_and_recorded_not_tamper(repo: Repo) -> None:
    changed = PYPROJECT.replace('"-q"', '"-q"\nasyncio_mode = "auto"')
    report = _report(repo, {"pyproject.toml": changed}, {**PKG, "pyproject.toml": PYPROJECT})
    (found,) = report.detections
    assert (found.kind.value, found.detail) == ("config_changed", "asyncio_mode")
    assert "laid back" in found.message
    assert report.lay == {"pyproject.toml": PYPROJECT.encode()}


def test_a_new_configuration_file_that_takes_over_is_judged_against_the_trusted_one(repo: Repo) -> None:
    """A new pytest.ini outranks pyproject.toml: what it says is compared with what pyproject said."""
    base = repo.commit({**PKG, "pyproject.toml": PYPROJECT})
    for ini, found, lay in (
        ("[pytest]\ntestpaths = tests\naddopts = -q --strict-markers\n", ("config_changed", "addopts"), {}),
        ("[pytest]\naddopts = -q\n", ("tamper", "pytest_config"), {"pytest.ini": None}),  # testpaths gone
    ):
        repo.git("checkout", "-q", base)
        cand = repo.commit({"pytest.ini": ini})
        report = verify_test_integrity(str(repo.path), base, base, cand, ("test_*.py",))
        assert [(d.kind.value, d.detail, d.path) for d in report.detections] == [(*found, "pytest.ini")]
        assert report.lay == lay


def test_moving_the_settings_to_another_file_unchanged_is_no_change(repo: Repo) -> None:
    cfg = "[metadata]\nname = calc\n\n[tool:pytest]\ntestpaths = tests\naddopts = -q\n"
    moved = PYPROJECT.replace("[tool.mypy]", "[tool.other]")
    report = _report(
        repo,
        {"pyproject.toml": moved, "setup.cfg": "[metadata]\nname = calc\n"},
        {**PKG, "pyproject.toml": '[project]\nname = "calc"\n', "setup.cfg": cfg},
    )
    assert report.detections == () and report.lay == {}


def test_a_copy_in_a_file_only_newer_pytest_reads_does_not_hide_a_loosened_original(repo: Repo) -> None:
    """pytest 9 reads ``pytest.toml`` first; pytest 7 and 8 read the loosened ``pytest.ini``."""
    ini = "[pytest]\ntestpaths = tests\n"
    report = _report(
        repo,
        {"pytest.toml": '[pytest]\ntestpaths = ["tests"]\n', "pytest.ini": ini + 'addopts = -k "not test_double"\n'},
        {**PKG, "pytest.ini": ini},
    )
    assert ("tamper", "pytest_config", "pytest.ini") in [(d.kind.value, d.detail, d.path) for d in report.detections]
    assert report.lay["pytest.ini"] == ini.encode()


@pytest.mark.parametrize(
    ("config", "path", "protected"),
    [
        ('testpaths = ["tests"]\n', "examples/test_demo.py", False),  # a script outside testpaths
        ('testpaths = ["tests"]\n', "examples/conftest.py", False),  # a conftest pytest does not load
        ('testpaths = ["tests"]\n', "tests/sub/conftest.py", True),  # one it does
        ('testpaths = ["tests/unit"]\n', "tests/fixtures/data.json", True),  # data beside the testpaths
        ('testpaths = ["tests"]\n', "docs/tests/test_x.py", False),
        ('testpaths = ["tests"]\npython_files = "tests_*.py"\n', "tests/tests_thing.py", True),
        ('python_files = "tests_*.py"\n', "pkg/tests_thing.py", True),
        ('python_files = "tests_*.py"\n', "pkg/test_thing.py", False),  # not collected
        ("", "examples/test_demo.py", True),  # no testpaths: pytest collects from the root
    ],
)
def test_the_protected_surface_is_what_the_trusted_configuration_collects(
    repo: Repo, config: str, path: str, protected: bool
) -> None:
    base_files = {**PKG, "pyproject.toml": "[tool.pytest.ini_options]\n" + config, path: "def test_demo():\n    pass\n"}
    report = _report(repo, {}, base_files, delete=(path,))
    assert bool(report.detections) is protected, report.detections


def test_test_naming_follows_python_functions(repo: Repo) -> None:
    tests = "def check_one():\n    assert 1\n\n\ndef helper():\n    return 1\n"
    config = '[tool.pytest.ini_options]\npython_functions = ["check_"]\n'
    report = _report(
        repo, {"tests/test_a.py": "def helper():\n    return 1\n"}, {"tests/test_a.py": tests, "pyproject.toml": config}
    )
    assert [d.detail for d in report.detections] == ["deleted_test"]


# -- end to end -------------------------------------------------------------------------------------

VERSIONED = {
    **PKG,
    "calc/__init__.py": '__version__ = "1.0"\n',
    "pyproject.toml": PYPROJECT.replace("\n[tool.mypy]\nstrict = true\n", ""),
    "tests/test_version.py": (
        "import pathlib\nimport re\n\nimport calc\n\n\ndef test_version_matches_the_package():\n"
        '    text = (pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text()\n'
        "    assert re.search(r'^version = \"(.*)\"', text, re.M).group(1) == calc.__version__\n"
    ),
}


def test_an_honest_fix_that_tightens_pytest_config_is_certified(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any]
) -> None:
    base = repo.commit(PKG)
    config = PKG["pyproject.toml"] + 'xfail_strict = true\naddopts = "--strict-markers"\n'
    cand = repo.commit({**FIX, "pyproject.toml": config})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    validate(doc, schema)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]
    changed = [d for d in doc["detections"] if d["kind"] == "config_changed"]
    assert [(d["path"], d["detail"]) for d in changed] == [
        ("pyproject.toml", "addopts"),
        ("pyproject.toml", "xfail_strict"),
    ]
    assert doc["integrity"]["reapplied"] == [] and doc["integrity"]["tested_commit"] == doc["candidate_commit"]


def test_a_version_bump_with_loosened_pytest_settings_keeps_the_bump_and_is_rejected(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any]
) -> None:
    """The fix bumps the version in pyproject.toml and the package; a test checks they agree.

    Laying back the whole pyproject.toml would revert the bump and fail that test; only the
    pytest settings are laid back, so it passes -- and the loosening still rejects the patch.
    """
    base = repo.commit(VERSIONED)
    bumped = {
        **FIX,
        "calc/__init__.py": '__version__ = "1.1"\n',
        "pyproject.toml": VERSIONED["pyproject.toml"].replace('"1.0"', '"1.1"'),
    }
    loosened = bumped["pyproject.toml"].replace('"-q"', "\"-q -k 'not slow'\"")
    cand = repo.commit({**bumped, "pyproject.toml": loosened})
    code, doc = certify(repo, tmp_path / "loose.json", "--baseline", base, "--candidate", cand, "--full")
    assert doc is not None
    validate(doc, schema)
    assert code == 1 and doc["verdict"]["verdict"] == "REJECTED", doc["verdict"]
    tamper = [d for d in doc["detections"] if d["kind"] == "tamper"]
    assert [(d["detail"], d["path"]) for d in tamper] == [("pytest_config", "pyproject.toml")]
    assert doc["verdict"]["reasons"][0].startswith("tamper: pyproject.toml: pytest settings loosened")
    assert doc["integrity"]["reapplied"] == ["pyproject.toml"]
    version = [r for r in doc["results"] if r["test_id"].endswith("test_version_matches_the_package")]
    assert version and all(r["candidate_result"] == "pass" for r in version), version
    assert not [t for t in doc["tiers"] if t["status"] == "failed"]  # nothing but the tamper rejects it

    repo.git("checkout", "-q", base)
    honest = repo.commit(bumped)
    code, doc = certify(repo, tmp_path / "honest.json", "--baseline", base, "--candidate", honest)
    assert doc is not None
    validate(doc, schema)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]


def test_an_honest_fix_deleting_an_example_script_outside_testpaths_is_certified(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any]
) -> None:
    demo = "from calc.ops import double\n\n\ndef test_demo():\n    print(double(21))\n"
    base = repo.commit({**PKG, "examples/test_demo.py": demo})
    cand = repo.commit(FIX, delete=("examples/test_demo.py",))
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    validate(doc, schema)
    assert code == 0 and doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]
    assert not [d for d in doc["detections"] if d["kind"] == "tamper"]
