"""Reapply tests, not files: a tampered test file is laid back test by test.

The trusted version of every tampered test runs, and so does the reproducer the candidate wrote
into the same file -- unless it is hostile, skipped, or the file cannot be merged, in which case
the report names it in ``dropped`` (the ladder's ``reproducer_lost_to_tamper``).
"""

from __future__ import annotations

import ast
import pathlib
from typing import Any

import pytest
from conftest import FIX, PKG, Repo, certify, validate

from runner import pyscan
from runner.integrity import IntegrityReport, verify_test_integrity
from runner.merge import merge_tests

TESTS = """import pytest

from calc.ops import double


@pytest.fixture
def two():
    return 2


def test_double(two):
    assert double(two) == 4
    assert double(0) == 0


class TestMore:
    def test_negative(self):
        assert double(-1) == -2


def test_three():
    assert double(3) == 6
"""

REPRODUCER = """

def test_half_of_four():
    from calc.ops import half

    assert half(4) == 2
"""

PATH = "tests/test_ops.py"


def _integrity(repo: Repo, text: str, trusted: dict[str, str] | None = None) -> tuple[IntegrityReport, str, str]:
    """B has ``TESTS``; the candidate writes ``text`` over it. Returns the report and B's, C's shas."""
    base = repo.commit({**PKG, PATH: TESTS})
    source = repo.commit(trusted) if trusted else base
    if trusted:
        repo.git("checkout", "-q", base)
    cand = repo.commit({PATH: text})
    return verify_test_integrity(str(repo.path), base, source, cand, ("test_*.py",)), base, cand


def _defs(source: bytes | str) -> dict[tuple[str, ...], str]:
    tree = ast.parse(source)
    return {k: ast.dump(n) for k, n in pyscan.definitions(tree).items()}


@pytest.mark.parametrize(
    ("tampered", "detail"),
    [
        (TESTS.replace("def test_three():\n    assert double(3) == 6\n", ""), "deleted_test"),
        (TESTS.replace("def test_three():", "def test_three_renamed():"), "deleted_test"),
        (TESTS.replace("def test_three():", "@pytest.mark.skip\ndef test_three():"), "skip_marker"),
        (TESTS.replace("def test_three():", "@pytest.mark.xfail\ndef test_three():"), "skip_marker"),
        (TESTS.replace("    assert double(0) == 0\n", ""), "weakened_assertion"),
        (TESTS.replace("double(3) == 6", "double(3) >= 0"), "modified_test"),
        (TESTS.replace("return 2", "return 0"), "modified_fixture"),
    ],
)
def test_a_reproducer_beside_a_tampered_test_survives_the_reapplication(repo: Repo, tampered: str, detail: str) -> None:
    report, _, _ = _integrity(repo, tampered + REPRODUCER)
    assert detail in [d.detail for d in report.detections]
    merged = report.lay[PATH]
    assert merged is not None
    trusted, mine, laid = _defs(TESTS), _defs(tampered + REPRODUCER), _defs(merged)
    assert {k: laid[k] for k in trusted} == trusted  # every trusted test, fixture and class as B has it
    assert laid[("test_half_of_four",)] == mine[("test_half_of_four",)]  # and the candidate's reproducer
    assert f"{PATH}::test_half_of_four" in report.kept and not report.dropped
    assert f"{PATH}::test_half_of_four" not in report.dropped


def test_a_new_method_in_a_trusted_class_is_kept_with_the_trusted_indentation(repo: Repo) -> None:
    """The candidate re-indented the file (no AST change) and skipped a test: its new method still fits."""
    two_spaces = "\n".join(
        line.replace("    ", "  ") if line.startswith("    ") else line for line in TESTS.splitlines()
    )
    tampered = two_spaces.replace("def test_three():", "@pytest.mark.skip\ndef test_three():")
    tampered = tampered.replace(
        "    assert double(-1) == -2\n",
        "    assert double(-1) == -2\n\n  def test_minus_two(self):\n    assert double(-2) == -4\n",
    )
    report, _, _ = _integrity(repo, tampered + "\n")
    merged = report.lay[PATH]
    assert merged is not None
    assert "\n    def test_minus_two(self):\n" in merged.decode()  # shifted to the trusted class's indentation
    assert _defs(merged)[("TestMore", "test_minus_two")] == _defs(tampered)[("TestMore", "test_minus_two")]
    assert report.kept == {f"{PATH}::TestMore::test_minus_two"}
    assert _defs(merged)[("test_three",)] == _defs(TESTS)[("test_three",)]


@pytest.mark.parametrize(
    ("new", "detail"),
    [
        ("def test_sneaky():\n    import os\n\n    os._exit(0)\n", "ends_session"),
        ("def test_sneaky():\n    import sys\n\n    sys.modules['calc.ops'] = None\n", "sys_modules"),
        ("def test_sneaky():\n    import _pytest.runner\n", "patches_pytest"),
        ("def pytest_collection_modifyitems(items):\n    items.clear()\n", "hook"),
        ("@pytest.fixture(autouse=True)\ndef test_sneaky(monkeypatch):\n    yield\n", "modified_fixture"),
        ("@pytest.fixture(name='two')\ndef sneaky_two():\n    return 0\n", "modified_fixture"),  # takes over ``two``
    ],
)
def test_a_hostile_new_definition_is_not_kept(repo: Repo, new: str, detail: str) -> None:
    report, _, _ = _integrity(repo, TESTS + REPRODUCER + "\n\n" + new)
    assert detail in [d.detail for d in report.detections], report.detections
    merged = report.lay[PATH]
    assert merged is not None
    laid = _defs(merged)
    assert not [k for k in laid if "sneaky" in k[-1] or k[-1].startswith("pytest_")]
    assert ("test_half_of_four",) in laid and laid[("two",)] == _defs(TESTS)[("two",)]
    if "test_sneaky" in new:
        assert report.dropped == {f"{PATH}::test_sneaky"}


def test_a_new_test_carrying_a_skip_in_a_tampered_file_is_not_kept(repo: Repo) -> None:
    skipped = "\n\n@pytest.mark.skipif(True, reason='later')\ndef test_later():\n    assert double(5) == 10\n"
    tampered = TESTS.replace("double(3) == 6", "double(3) >= 0")
    report, _, _ = _integrity(repo, tampered + REPRODUCER + skipped)
    merged = report.lay[PATH]
    assert merged is not None and ("test_later",) not in _defs(merged)
    assert report.dropped == {f"{PATH}::test_later"} and report.kept == {f"{PATH}::test_half_of_four"}


def test_an_unparseable_candidate_file_keeps_the_trusted_file_and_drops_its_tests(repo: Repo) -> None:
    broken = TESTS + REPRODUCER + "\n\nclass TestBroken:\n    def test_inside(self):\n        assert double(1 ==\n"
    report, _, _ = _integrity(repo, broken)
    assert [d.detail for d in report.detections] == ["modified_test"]
    assert report.lay[PATH] == TESTS.encode()
    assert report.dropped == {f"{PATH}::test_half_of_four", f"{PATH}::TestBroken::test_inside"}
    assert report.kept == frozenset()


def test_a_new_definition_shadowing_a_trusted_name_keeps_the_trusted_file(repo: Repo) -> None:
    """``def double`` after ``from calc.ops import double``: the trusted tests would call the fake."""
    shadow = TESTS + REPRODUCER + "\n\ndef double(n):\n    return 2 * n\n"
    report, _, _ = _integrity(repo, shadow)
    assert "modified_helper" in [d.detail for d in report.detections]
    assert report.lay[PATH] == TESTS.encode()
    assert report.dropped == {f"{PATH}::test_half_of_four"}


def test_the_imports_a_kept_test_needs_come_along(repo: Repo) -> None:
    tampered = TESTS.replace("from calc.ops import double", "from calc.ops import double, half\nimport math")
    tampered = tampered.replace("double(3) == 6", "double(3) >= 0")
    new = "\n\nCASES = [(4, 2), (6, 3)]\n\n\n@pytest.mark.parametrize(('n', 'h'), CASES)\ndef test_halves(n, h):\n"
    new += "    assert half(n) == h\n"
    report, _, _ = _integrity(repo, tampered + new)
    merged = report.lay[PATH]
    assert merged is not None
    text = merged.decode()
    assert text.startswith(TESTS) and "from calc.ops import half\n" in text and "CASES = [(4, 2), (6, 3)]" in text
    assert "import math" not in text  # nothing kept reads it
    assert f"{PATH}::test_halves" not in report.dropped and f"{PATH}::test_halves" in report.kept


def test_a_new_file_with_hostile_module_code_keeps_its_plain_tests(repo: Repo) -> None:
    base = repo.commit(PKG)
    new = "import sys\n\nsys.modules['calc.ops'] = None\n\n\ndef test_plain():\n    assert 1\n"
    cand = repo.commit({"tests/test_new.py": new})
    report = verify_test_integrity(str(repo.path), base, base, cand, ("test_*.py",))
    assert [d.detail for d in report.detections] == ["sys_modules"]
    assert report.lay == {"tests/test_new.py": b"def test_plain():\n    assert 1\n"}
    assert report.kept == {"tests/test_new.py::test_plain"}


def test_the_trusted_sources_file_is_merged_with_the_candidates_own_tests(repo: Repo) -> None:
    """--tests-from: the trusted file changed; the candidate's own extra test runs on top of it."""
    trusted_tests = TESTS + "\n\ndef test_hidden():\n    assert double(5) == 10\n"
    mine = TESTS + "\n\ndef test_hidden():\n    assert double(5) > 0\n" + REPRODUCER
    report, _, _ = _integrity(repo, mine, {PATH: trusted_tests})
    assert report.detections == ()  # its own test named like the hidden one is no tamper
    merged = report.lay[PATH]
    assert merged is not None
    assert _defs(merged)[("test_hidden",)] == _defs(trusted_tests)[("test_hidden",)]
    assert ("test_half_of_four",) in _defs(merged)
    assert report.kept == {f"{PATH}::test_half_of_four"} and not report.dropped
    assert PATH in report.trusted


def test_an_untouched_file_keeps_the_candidates_new_tests_as_written(repo: Repo) -> None:
    report, _, _ = _integrity(repo, TESTS + REPRODUCER)
    assert report.detections == () and report.lay == {}
    assert report.kept == {f"{PATH}::test_half_of_four"}


def test_merge_of_a_file_the_trusted_source_deleted_removes_it() -> None:
    merged = merge_tests(PATH, None, (TESTS + REPRODUCER).encode(), TESTS.encode())
    assert merged.content is None and merged.dropped == {f"{PATH}::test_half_of_four"}


def test_a_one_line_trusted_class_cannot_take_a_method() -> None:
    trusted = b"class TestOne: pass\n"
    candidate = b"class TestOne:\n    def test_x(self):\n        pass\n"
    merged = merge_tests(PATH, trusted, candidate, trusted)
    assert merged.content == trusted and merged.dropped == {f"{PATH}::TestOne::test_x"}


# -- end to end -------------------------------------------------------------------------------------


def test_a_reproducer_added_beside_a_new_skip_marker_runs_and_the_skip_rejects(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any]
) -> None:
    """The candidate adds its reproducer to tests/test_x.py and skips an existing test there.

    Laying back the whole file would delete the designated reproducer (a bad input); laid back
    test by test, the reproducer runs and the skip still rejects the patch.
    """
    existing = "from calc.ops import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    base = repo.commit({**PKG, "tests/test_x.py": existing})
    skipped = "import pytest\n\n" + existing.replace("def test_double", "@pytest.mark.skip\ndef test_double")
    reproducer = "\n\ndef test_half():\n    from calc.ops import half\n\n    assert half(4) == 2\n"
    cand = repo.commit({"calc/ops.py": FIX["calc/ops.py"], "tests/test_x.py": skipped + reproducer})
    reproducer_id = "tests/test_x.py::test_half"
    args = ("--baseline", base, "--candidate", cand, "--reproducer", reproducer_id, "--full")  # climb on after it
    code, doc = certify(repo, tmp_path / "e.json", *args)
    assert doc is not None
    validate(doc, schema)
    assert code == 1 and doc["verdict"]["verdict"] == "REJECTED", doc["verdict"]
    tamper = [d for d in doc["detections"] if d["kind"] == "tamper"]
    assert [(d["detail"], d["path"]) for d in tamper] == [("skip_marker", "tests/test_x.py")]
    assert doc["integrity"]["reapplied"] == ["tests/test_x.py"]
    ran = {r["test_id"]: r for r in doc["results"]}
    reproducer_result = ran["tests/test_x.py::test_half"]
    assert (reproducer_result["baseline_result"], reproducer_result["candidate_result"]) == ("fail", "pass")
    assert reproducer_result["bug_discriminating"]


@pytest.mark.parametrize(
    ("trusted", "laid"),
    [
        (
            {"tests/conftest.py": "import pytest\n\ncollect_ignore = ['x']\n"},
            b"import pytest\n\ncollect_ignore = ['x']\n",
        ),
        ({"tests/data/expected.txt": "new expectation\n"}, b"new expectation\n"),
    ],
)
def test_a_file_the_trusted_source_changed_and_the_candidate_left_alone_is_no_tamper(
    repo: Repo, trusted: dict[str, str], laid: bytes
) -> None:
    """The trusted source's conftest or data changed; the candidate kept B's: it is laid, not blamed."""
    base = repo.commit({**PKG, PATH: TESTS, "tests/conftest.py": "import pytest\n", "tests/data/expected.txt": "old\n"})
    source = repo.commit(trusted)
    repo.git("checkout", "-q", base)
    cand = repo.commit({"calc/ops.py": "def double(n):\n    return n * 2\n\n\ndef half(n):\n    return n // 2\n"})
    report = verify_test_integrity(str(repo.path), base, source, cand, ("test_*.py",))
    assert report.detections == ()
    assert report.lay == {next(iter(trusted)): laid}


DATA = '''"""Tables of cases."""

from calc.ops import double

CASES = [(2, 4), (3, 6)]


class TestTable:
    """More cases."""

    more = [(5, 10)]

    def test_more(self):
        for n, want in self.more:
            assert double(n) == want


def test_double():
    for n, want in CASES:
        assert double(n) == want
'''


CLASS = "\n\n\nclass TestTable:"


@pytest.mark.parametrize(
    ("edit", "trusted", "expected", "found"),
    [
        # a probe: trimmed of the case a broken double fails, each table's test passed on C
        (("CASES = [(2, 4), (3, 6)]", "CASES = [(2, 4)]"), None, (), [("modified_helper", 5)]),
        (("more = [(5, 10)]", "more = []"), None, (), [("modified_test", 8)]),
        (("CASES = [(2, 4), (3, 6)]", "CASES = []\nCASES.append((2, 4))"), None, (), [("modified_helper", 5)]),
        (("from calc.ops import double", "from calc.ops import half"), None, (), [("modified_helper", 3)]),
        (("class TestTable:", "class TestTable(Base):"), None, (), [("modified_test", 8)]),
        # allowed: what a reproducer needs, a docstring, a declared change, the trusted source's
        (("from calc.ops import double", "from calc.ops import double, half"), None, (), []),
        (('"""Tables of cases."""', '"""Tables."""'), None, (), []),
        (('"""More cases."""', '"""Cases."""'), None, (), []),
        (("CASES = [(2, 4), (3, 6)]", "CASES = [(2, 4)]"), None, ("tests/test_ops.py::CASES",), []),
        (("more = [(5, 10)]", "more = []"), None, ("tests/test_ops.py::TestTable",), []),
        (("CASES = [(2, 4), (3, 6)]", "CASES = [(2, 4), (3, 6), (4, 8)]"), "same", (), []),
        (
            ("CASES = [(2, 4), (3, 6)]", "CASES = [(2, 4)]"),
            "CASES = [(2, 4), (3, 6), (4, 8)]",
            (),
            [("modified_helper", 5)],
        ),
        # a review's probes: the table trimmed by a statement added, its own statement as it was
        ((CLASS, "\nCASES.pop()" + CLASS), None, (), [("modified_helper", 6)]),
        ((CLASS, "\nCASES = CASES[:1]" + CLASS), None, (), [("modified_helper", 6)]),
        ((CLASS, "\nCASES += []\ndel CASES[1]" + CLASS), None, (), [("modified_helper", 6), ("modified_helper", 7)]),
        ((CLASS, "\ndouble = abs" + CLASS), None, (), [("modified_helper", 6)]),
        (("def test_double", "TestTable.more = []\n\n\ndef test_double"), None, (), [("modified_helper", 18)]),
        (
            ("def test_double", "setattr(TestTable, 'more', [])\n\n\ndef test_double"),
            None,
            (),
            [("modified_helper", 18)],
        ),
        ((CLASS, "\nCASES.pop()" + CLASS), None, ("tests/test_ops.py::CASES",), []),
        (("    more = [(5, 10)]\n", "    more = [(5, 10)]\n    more = []\n"), None, (), [("modified_test", 8)]),
        (("    more = [(5, 10)]\n", "    more = [(5, 10)]\n    more.pop()\n"), None, (), [("modified_test", 8)]),
        # a fifth review's probes: what added code does with the table, not which statement does it
        ((CLASS, "\n_c = CASES\n_c.pop()" + CLASS), None, (), [("modified_helper", 7)]),
        ((CLASS, "\nlist.pop(CASES)" + CLASS), None, (), [("modified_helper", 6)]),
        ((CLASS, "\nimport operator\noperator.delitem(CASES, 1)" + CLASS), None, (), [("modified_helper", 7)]),
        ((CLASS, "\nglobals()['CASES'] = CASES[:1]" + CLASS), None, (), [("modified_helper", 6)]),
        ((CLASS, "\n_x = (CASES := [(2, 4)])" + CLASS), None, (), [("modified_helper", 6)]),
        ((CLASS, "\n\nclass _Trim:\n    CASES.pop()" + CLASS), None, (), [("modified_helper", 8)]),
        (
            (CLASS, "\n\n@(lambda f: (CASES.pop(), f)[1])\ndef _helper():\n    pass" + CLASS),
            None,
            (),
            [("modified_helper", 7)],
        ),
        ((CLASS, "\n\ndef _helper(x=CASES.pop()):\n    return x" + CLASS), None, (), [("modified_helper", 7)]),
        ((CLASS, "\n\ndef test_first():\n    CASES[1:] = []" + CLASS), None, (), [("modified_helper", 8)]),
        ((CLASS, "\n\ndef setup_module():\n    pass" + CLASS), None, (), [("modified_fixture", 7)]),
        # a sixth review's: fixtures run around every existing test by the module's mark
        (
            (
                CLASS,
                "\n\n@pytest.fixture\ndef _env():\n    yield\n\n\npytestmark = pytest.mark.usefixtures('_env')" + CLASS,
            ),
            None,
            (),
            [("modified_fixture", 12)],
        ),
        (
            (CLASS, "\n\npytestmark = [pytest.mark.usefixtures('tmp_path')]" + CLASS),
            None,
            ("tests/test_ops.py::pytestmark",),
            [],
        ),
        # a seventh review's: the class's own mark, and the module's mark by another name
        (
            ("    more = [(5, 10)]\n", "    more = [(5, 10)]\n    pytestmark = pytest.mark.usefixtures('tmp_path')\n"),
            None,
            (),
            [("modified_test", 8)],
        ),
        (
            (CLASS, "\n\nUSE = pytest.mark.usefixtures('tmp_path')\npytestmark = USE" + CLASS),
            None,
            (),
            [("modified_fixture", 8)],
        ),
        # an eighth review's: marks the check cannot read; a plain mark of the class's is none
        (
            (CLASS, "\n\npytestmark = getattr(pytest.mark, 'usefixtures')('tmp_path')" + CLASS),
            None,
            (),
            [("modified_fixture", 7)],
        ),
        (
            (CLASS, "\n\ndef _m():\n    return pytest.mark.usefixtures('tmp_path')\n\n\npytestmark = _m()" + CLASS),
            None,
            (),
            [("modified_fixture", 11)],
        ),
        (
            (CLASS, "\n\npytestmark = []\npytestmark.append(pytest.mark.usefixtures('tmp_path'))" + CLASS),
            None,
            (),
            [("modified_fixture", 8)],
        ),
        ((CLASS, "\n\nMARKS = [pytest.mark.filterwarnings('ignore')]\npytestmark = MARKS" + CLASS), None, (), []),
        # a tenth review's: a mark list changed after, or bound again; a guarded plain mark is none
        (
            (CLASS, "\n\nMARKS = []\nMARKS.append(pytest.mark.usefixtures('tmp_path'))\npytestmark = MARKS" + CLASS),
            None,
            (),
            [("modified_fixture", 9)],
        ),
        (
            (CLASS, "\n\nM = [pytest.mark.usefixtures('tmp_path')]\npytestmark = M\nM = [pytest.mark.slow]" + CLASS),
            None,
            (),
            [("modified_fixture", 8)],
        ),
        ((CLASS, "\n\nif pytest:\n    pytestmark = pytest.mark.filterwarnings('ignore')" + CLASS), None, (), []),
        (
            (
                CLASS,
                "\n\nimport sys\nMARKS = [pytest.mark.slow]\n"
                "sys.modules[__name__].MARKS.append(pytest.mark.usefixtures('tmp_path'))\npytestmark = MARKS" + CLASS,
            ),
            None,
            (),
            [("modified_fixture", 10)],
        ),
        (
            (
                CLASS,
                "\n\nM = [pytest.mark.slow] + []\nM.append(pytest.mark.usefixtures('tmp_path'))\npytestmark = M"
                + CLASS,
            ),
            None,
            (),
            [("modified_fixture", 9)],
        ),
        (
            (CLASS, "\n\nSLOW = pytest.mark.slow\npytestmark = [SLOW]\n\n\n@SLOW\ndef test_new():\n    pass" + CLASS),
            None,
            (),
            [],
        ),
        (
            ("    more = [(5, 10)]\n", "    more = [(5, 10)]\n    pytestmark = pytest.mark.filterwarnings('ignore')\n"),
            None,
            (),
            [],
        ),
        (
            ("    def test_more", "    def setup_method(self):\n        self.more = []\n\n    def test_more"),
            None,
            (),
            [("modified_helper", 14), ("modified_fixture", 13)],
        ),
        (
            ("    def test_more", "    @property\n    def more(self):\n        return []\n\n    def test_more"),
            None,
            (),
            [("modified_helper", 14)],
        ),
        (
            ("CASES = [(2, 4), (3, 6)]", "CASES = []\nCASES.append((2, 4))\nCASES.append((3, 6))\nCASES = []"),
            None,
            (),
            [("modified_helper", 5)],
        ),
        (
            ("CASES = [(2, 4), (3, 6)]\n", "CASES = [(2, 4), (3, 6)]\n_c = CASES\n"),
            None,
            ("tests/test_ops.py::CASES",),
            [],
        ),
        # allowed: new data made from the old; a module changed in place is not the tests' data;
        # a test class given a new method with data of its own; a submodule of what B imports;
        # the table read by a new test
        (("from calc.ops import double", "import calc\nimport calc.ops\nfrom calc.ops import double"), None, (), []),
        (
            (
                CLASS,
                "\n\n@pytest.mark.parametrize('pair', [*CASES, (4, 8)])\ndef test_pairs(pair):\n"
                "    assert pair in CASES or len(CASES) == 2" + CLASS,
            ),
            None,
            (),
            [],
        ),
        (("    more = [(5, 10)]\n", "    more = [(5, 10)]\n    fresh = [(7, 14)]\n"), None, (), []),
        ((CLASS, "\nMORE = CASES + [(4, 8)]" + CLASS), None, (), []),
        (
            ("from calc.ops import double", "import sys\n\nfrom calc.ops import double\n\nsys.path.insert(0, '.')"),
            None,
            (),
            [],
        ),
    ],
)
def test_a_tests_data_changed_is_a_test_changed(
    repo: Repo, edit: tuple[str, str], trusted: str | None, expected: tuple[str, ...], found: list[tuple[str, int]]
) -> None:
    """Module-level and class-level statements are what unchanged tests read: trimmed, a test of
    a broken function passes on C. The candidate may add to them what its reproducers need."""
    base = repo.commit({**PKG, PATH: DATA})
    mine = DATA.replace(*edit)
    source = base
    if trusted is not None:
        source = repo.commit({PATH: mine if trusted == "same" else DATA.replace(edit[0], trusted)})
        repo.git("checkout", "-q", base)
    cand = repo.commit({PATH: mine + REPRODUCER})
    report = verify_test_integrity(str(repo.path), base, source, cand, ("test_*.py",), expected)
    assert [(d.detail, d.line) for d in report.detections] == found


STEPS = DATA.replace("CASES = [(2, 4), (3, 6)]", "CASES = []\nCASES.append((2, 4))\nCASES.append((3, 6))")


@pytest.mark.parametrize(
    ("mine", "found"),
    [
        # B's own statement run once more after B filled the table: every statement of B's kept
        (STEPS.replace(CLASS, "\nCASES = []" + CLASS), [("modified_helper", 8)]),
        # B's statements, each kept, in another order: the table emptied after it was filled
        (
            STEPS.replace(
                "CASES.append((2, 4))\nCASES.append((3, 6))", "CASES.append((2, 4))\nCASES = []\nCASES.append((3, 6))"
            ).replace("CASES = []\nCASES.append((2, 4))", "CASES = [(9, 18)]\nCASES.append((2, 4))", 1),
            [("modified_helper", 6), ("modified_helper", 5)],
        ),
        (
            STEPS.replace("CASES.append((2, 4))\nCASES.append((3, 6))", "CASES.append((3, 6))\nCASES.append((2, 4))"),
            [("modified_helper", 6)],
        ),
    ],
)
def test_a_baseline_statement_run_again_or_out_of_order_is_a_test_changed(
    repo: Repo, mine: str, found: list[tuple[str, int]]
) -> None:
    base = repo.commit({**PKG, PATH: STEPS})
    cand = repo.commit({PATH: mine + REPRODUCER})
    report = verify_test_integrity(str(repo.path), base, base, cand, ("test_*.py",))
    assert [(d.detail, d.line) for d in report.detections] == found


def test_the_candidates_own_file_where_the_trusted_tests_add_one_is_no_tamper(repo: Repo) -> None:
    """``--tests-from`` adds ``tests/test_half.py``; the candidate wrote its own of that name,
    without the trusted file's imports or table: the trusted file is laid over it, and nothing
    of it was B's (a review: REJECTED, told to declare names it never saw)."""
    base = repo.commit(PKG)
    trusted = (
        "import pytest\n\nfrom calc.ops import half\n\nCASES = [(4, 2)]\n\n\n"
        "def test_half():\n    for n, want in CASES:\n        assert half(n) == want\n"
    )
    source = repo.commit({"tests/test_half.py": trusted})
    repo.git("checkout", "-q", base)
    cand = repo.commit(
        {"tests/test_half.py": "from calc.ops import half\n\n\ndef test_half():\n    assert half(4) == 2\n"}
    )
    report = verify_test_integrity(str(repo.path), base, source, cand, ("test_*.py",))
    assert report.detections == ()
    assert report.lay == {"tests/test_half.py": trusted.encode()}


@pytest.mark.parametrize(
    "reach",
    [
        "import test_ops\n\ntest_ops.CASES[:] = [(2, 4)]\n",
        "from test_ops import CASES\n\nCASES.pop()\n",
        "from tests import test_ops\n\ndel test_ops.CASES[1]\n",
        "from test_ops import TestTable\n\nTestTable.more.clear()\n",
        "import tests.test_ops\n\ntests.test_ops.TestTable.more.append((5, 11))\n",
        "import sys\n\nsys.modules['test_ops'].CASES.pop()\n",
    ],
)
def test_a_new_test_file_changing_another_test_modules_data_is_tamper(repo: Repo, reach: str) -> None:
    """A new file's import-time code runs at collection on both sides: the table trimmed there
    is trimmed on B too (B runs C's test files), and nothing flips."""
    base = repo.commit({**PKG, PATH: DATA})
    cand = repo.commit({"tests/test_zz.py": reach + REPRODUCER})
    report = verify_test_integrity(str(repo.path), base, base, cand, ("test_*.py",))
    assert [(d.path, d.detail) for d in report.detections][:1] == [("tests/test_zz.py", "modified_helper")]


def test_a_new_test_file_reading_another_test_modules_data_is_no_tamper(repo: Repo) -> None:
    base = repo.commit({**PKG, PATH: DATA})
    reads = "from test_ops import CASES, TestTable\n\nALL = CASES + TestTable.more\n\n\ndef test_all():\n"
    reads += "    assert len(ALL) == 3\n"
    cand = repo.commit({"tests/test_zz.py": reads})
    report = verify_test_integrity(str(repo.path), base, base, cand, ("test_*.py",))
    assert report.detections == ()


def test_a_changed_conftest_says_how_tests_that_need_it_are_given(repo: Repo) -> None:
    """An honest fix adding a fixture to ``tests/conftest.py`` is REJECTED on its own tests (a
    real one: munch): the finding says the way -- the fix's tests given as trusted."""
    base = repo.commit({**PKG, PATH: TESTS, "tests/conftest.py": "import pytest\n"})
    cand = repo.commit({"tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef n():\n    return 2\n"})
    report = verify_test_integrity(str(repo.path), base, base, cand, ("test_*.py",))
    (found,) = report.detections
    assert (found.detail, found.path) == ("conftest", "tests/conftest.py")
    assert "--tests-from" in found.message
