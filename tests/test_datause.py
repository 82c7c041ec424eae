"""``runner.datause``: what added test code does with the existing tests' data.

Pure logic over source text: each case is what a candidate might add beside ``BASELINE`` (a
module-level table, a test class with a table of its own) and what the check says of it.
"""

from __future__ import annotations

import ast

import pytest

from runner import datause

BASELINE = (
    "import os\n\nBASE = os.path.dirname(__file__)\nCASES = [(2, 4)]\n\n\n"
    "class TestTable:\n    cases = [(5, 10)]\n\n    def test_more(self):\n        pass\n"
)
DATA = datause.module_data(ast.parse(BASELINE))


def _found(source: str, owner: str | None = None, added: frozenset[str] = frozenset()) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    nodes = tree.body[0].body if owner else tree.body  # type: ignore[attr-defined]
    data = DATA | datause.Data(added=added)
    return [(m.line, m.name) for m in datause.misuses(nodes, data, owner)]


def test_the_baseline_module_says_its_tables_and_its_other_values() -> None:
    assert DATA.names == {"CASES"} and DATA.loose == {"BASE"}
    assert DATA.members == {"TestTable": frozenset({"cases"})}


@pytest.mark.parametrize(
    ("source", "owner", "found"),
    [
        ("_c = CASES\n_c.pop()\n", None, [(2, "CASES")]),
        ("def _trim():\n    _c.clear()\n\n\n_c = CASES\n_trim()\n", None, [(2, "CASES")]),  # used above its binding
        ("def test_x():\n    c = CASES\n    d = c\n    d[0] = 1\n", None, [(4, "CASES")]),
        ("class _T:\n    c = CASES\n", None, [(2, "CASES")]),  # a class attribute: out of sight
        ("list.pop(CASES)\n", None, [(1, "CASES")]),
        ("import operator\noperator.delitem(CASES, 0)\n", None, [(2, "CASES")]),
        ("globals()['CASES'] = []\n", None, [(1, "CASES")]),
        ("x = (CASES := [])\n", None, [(1, "CASES")]),
        ("@(lambda f: (CASES.clear(), f)[1])\ndef test_x():\n    pass\n", None, [(1, "CASES")]),
        ("def _h(x=CASES.pop()):\n    return x\n", None, [(1, "CASES")]),
        ("def test_first():\n    CASES[0:] = []\n", None, [(2, "CASES")]),
        ("class TestTable:\n    def test_x(self):\n        type(self).cases.pop()\n", "TestTable", [(3, "self.cases")]),
        ("class TestTable:\n    def setup_method(self):\n        self.cases = []\n", "TestTable", [(3, "self.cases")]),
        ("class TestNew(TestTable):\n    def test_x(self):\n        self.cases.pop()\n", None, [(3, "self.cases")]),
        ("getattr(TestTable, 'cases').pop()\n", None, [(1, "TestTable.cases")]),
        ("k = 'cases'\ngetattr(TestTable, k).pop()\n", None, [(2, "getattr")]),
        ("TestTable.extra = 1\n", None, [(1, "TestTable.extra")]),
        ("BASE = '/tmp'\n", None, [(1, "BASE")]),
        ("exec('CASES.clear()')\n", None, [(1, "exec")]),
        ("globals()['CASES'].pop()\n", None, [(1, "CASES")]),
        ("import sys\nsys.modules[__name__].CASES.clear()\n", None, [(2, "CASES")]),
        ("import importlib\nimportlib.import_module(__name__).CASES[0] = 1\n", None, [(2, "CASES")]),
        ("_c = CASES or []\n_c.pop()\n", None, [(1, "CASES")]),
        ("_c = CASES if True else []\n", None, [(1, "CASES")]),
        # reads: what an honest reproducer does with them
        ("for n, want in CASES:\n    assert n * 2 == want\n", None, []),
        ("MORE = CASES + [(3, 6)]\nALL = [*CASES, *TestTable.cases]\n", None, []),
        ("import pytest\n\n@pytest.mark.parametrize('case', CASES)\ndef test_x(case):\n    pass\n", None, []),
        ("import pathlib\nROOT = pathlib.Path(BASE)\nassert sorted(CASES) == CASES\n", None, []),
        ("def test_x(CASES):\n    CASES.pop()\n", None, []),  # a parameter, not the table
        ("class TestNew(TestTable):\n    def test_x(self):\n        assert len(self.cases) == 1\n", None, []),
        ("exec('x = 1', {})\n", None, []),
        ("import sys, unittest\nsuite = unittest.TestLoader().loadTestsFromModule(sys.modules[__name__])\n", None, []),
        ("assert CASES and len(CASES) == 1\nok = 1 if CASES else 0\n", None, []),
        ("def test_x():\n    expected = CASES\n    assert sorted(expected) == expected\n", None, []),
        ("def test_x(self):\n    cases = TestTable.cases\n    for n, want in cases:\n        assert n\n", None, []),
    ],
)
def test_what_added_code_does_with_the_tables(source: str, owner: str | None, found: list[tuple[int, str]]) -> None:
    assert _found(source, owner) == found


def test_a_table_handed_to_a_function_the_candidate_added_is_a_finding() -> None:
    source = "def _trim(x):\n    x.pop()\n\n\n_trim(CASES)\nlen(CASES)\n"
    assert _found(source, added=frozenset({"_trim"})) == [(5, "CASES")]


def test_another_test_modules_data_through_every_way_of_importing_it() -> None:
    modules = {"test_tables": DATA}
    for source in (
        "import test_tables\ntest_tables.CASES.pop()\n",
        "import tests.test_tables\ntests.test_tables.TestTable.cases.clear()\n",
        "from tests import test_tables as t\ndel t.CASES[0]\n",
        "from test_tables import CASES\nCASES.append(1)\n",
        "from test_tables import TestTable\nTestTable.cases[:] = []\n",
    ):
        tree = ast.parse(source)
        assert [m.line for m in datause.misuses(tree.body, datause.imported_data(tree, modules))] == [2], source
    tree = ast.parse("import sys\nsys.modules['test_tables'].CASES.pop()\n")
    assert [m.name for m in datause.string_reach(tree, modules)] == ["test_tables"]
