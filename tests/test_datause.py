"""``runner.datause``: what added test code does with the existing tests' data.

Pure logic over source text: each case is what a candidate might add beside ``BASELINE`` (a
module-level table, a test class with a table of its own) and what the check says of it.
"""

from __future__ import annotations

import ast

import pytest

from runner import datause, pyscan

BASELINE = (
    "import os\n\nBASE = os.path.dirname(__file__)\nCASES = [(2, 4)]\n\n\n"
    "class TestTable:\n    cases = [(5, 10)]\n\n    def test_more(self):\n        pass\n"
)
DATA = datause.module_data(ast.parse(BASELINE))


def _found(
    source: str, owner: str | None = None, added: frozenset[str] = frozenset(), baseline: datause.Data = DATA
) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    nodes = tree.body[0].body if owner else tree.body  # type: ignore[attr-defined]
    data = baseline | datause.Data(added=added)
    return [(m.line, m.name) for m in datause.misuses(nodes, data, owner)]


def test_the_baseline_module_says_its_tables_and_its_other_values() -> None:
    assert DATA.names == {"CASES"} and DATA.loose == {"BASE"}
    assert DATA.members == {"TestTable": frozenset({"cases"})}


def test_a_subclass_in_the_baseline_holds_its_bases_data() -> None:
    """A class attribute is shared with every subclass: the baseline's ``TestAgain(TestTable)``
    reaches ``TestTable.cases`` as its own ``cases`` -- trimmed through it, CERTIFIED -- unless
    it binds ``cases`` itself."""
    source = BASELINE + "\n\nclass TestAgain(TestTable):\n    label = 'again'\n"
    source += "\n\nclass TestOwn(TestTable):\n    cases = None\n"
    data = datause.module_data(ast.parse(source))
    assert data.members == {"TestTable": {"cases"}, "TestAgain": {"cases"}, "TestOwn": frozenset()}
    assert _found("TestAgain.cases.pop()\n", baseline=data) == [(1, "TestAgain.cases")]
    assert _found("def test_a():\n    TestAgain().cases.clear()\n", baseline=data) == [(2, "TestAgain.cases")]
    in_class = "class TestAgain:\n    def test_z(self):\n        self.cases.pop()\n"
    assert _found(in_class, owner="TestAgain", baseline=data) == [(3, "self.cases")]
    assert _found("class _K(TestAgain):\n    pass\n\n\n_K.cases.pop()\n", baseline=data) == [(5, "TestAgain.cases")]
    assert _found("def test_a():\n    assert TestOwn.cases is None\n", baseline=data) == []


#: A baseline of classes whose instances hold values of their own: a helper made by its
#: ``__init__``, a model of a library's that copies its defaults, a unittest class's setup.
OWN = BASELINE + (
    "\n\nclass TestThing:\n    __test__ = False\n    items = []\n\n"
    "    def __init__(self):\n        self.items = []\n\n\n"
    "class TestModel(BaseModel):\n    tags = []\n\n\n"
    "class TestUsers(unittest.TestCase):\n    created = []\n    CASES = [1]\n\n"
    "    def setUp(self):\n        self.created = []\n        self.cases = self.CASES\n"
    # a marked test class; setups whose names are no test's own: a copy of the class's list, a
    # plain class's setUp (pytest never runs it), a subclass's own setUp (not calling its base's)
    "\n\n@pytest.mark.slow\nclass TestMarked:\n    cases = [1]\n"
    "\n\nclass TestCopy(unittest.TestCase):\n    cases = [1]\n\n"
    "    def setUp(self):\n        self.cases = list(self.cases)\n"
    "\n\nclass TestPlain:\n    created = []\n\n    def setUp(self):\n        self.created = []\n"
    "\n\nclass TestMore(TestUsers):\n    def setUp(self):\n        pass\n"
    "\n\nclass TestAgain(TestUsers):\n    def setUp(self):\n        super().setUp()\n"
)


@pytest.mark.parametrize(
    ("source", "owner", "found"),
    [
        # values the instance holds of its own: made by __init__ or a model, set by the test
        ("def test_a():\n    t = TestThing()\n    t.items.append(1)\n", None, []),
        ("def test_a():\n    m = TestModel()\n    m.tags.append('t')\n", None, []),
        ("def test_a():\n    t = TestTable()\n    t.cases = list(t.cases)\n    t.cases.sort()\n", None, []),
        ("class _K(TestTable):\n    pass\n\n\n_K.cases = [(1, 2)]\n_K.cases.append((3, 6))\n", None, []),
        ("def test_a():\n    t = TestTable()\n    t.cases.pop()\n    t.cases = []\n", None, [(3, "TestTable.cases")]),
        ("class _K(TestTable):\n    pass\n\n\n_K.cases.pop()\n_K.cases = []\n", None, [(5, "TestTable.cases")]),
        # what each test's setup makes again is its instance's; an alias of the class's is not
        ("class TestUsers:\n    def test_b(self):\n        self.created.append(1)\n", "TestUsers", []),
        ("class TestUsers:\n    def test_b(self):\n        self.CASES.pop()\n", "TestUsers", [(3, "self.CASES")]),
        # the instance a method runs on by another name, the class's data through super() (a fourth
        # review's probes; ``s = self`` CERTIFIED)
        (
            "class TestTable:\n    def test_a(self):\n        s = self\n        s.cases.pop()\n",
            "TestTable",
            [(4, "self.cases")],
        ),
        ("class TestTable:\n    def test_a(this):\n        this.cases.pop()\n", "TestTable", [(3, "self.cases")]),
        (
            "class TestUsers:\n    def test_a(self):\n        super().created.pop()\n",
            "TestUsers",
            [(3, "super.created")],
        ),
        ("class TestUsers:\n    def test_a(this):\n        this.created.append(1)\n", "TestUsers", []),
        ("class TestAgain:\n    def test_a(self):\n        self.created.append(1)\n", "TestAgain", []),
        ("def test_a():\n    t = TestTable(); t.cases = []; t.cases.pop()\n", None, []),
        ("class TestTable:\n    @staticmethod\n    def helper(s):\n        s.cases.pop()\n", "TestTable", []),
        # a dummy class of the same name does not hide a new subclass (a review's probe)
        (
            "class _K(TestTable):\n    pass\n\n\n_K.cases.pop()\n\n\ndef _h():\n    class _K:\n        pass\n",
            None,
            [(5, "TestTable.cases")],
        ),
        # a third review's probes, each CERTIFIED or clean before: not the instance's own
        ("def test_a():\n    t = TestMarked()\n    t.cases.pop()\n", None, [(3, "TestMarked.cases")]),
        (
            "class TestUsers:\n    def test_b(self):\n        type(self).created.pop()\n",
            "TestUsers",
            [(3, "self.created")],
        ),
        ("class TestCopy:\n    def test_b(self):\n        self.cases.pop()\n", "TestCopy", [(3, "self.cases")]),
        (
            "class TestPlain:\n    def test_b(self):\n        self.created.append(1)\n",
            "TestPlain",
            [(3, "self.created")],
        ),
        ("class TestMore:\n    def test_b(self):\n        self.created.append(1)\n", "TestMore", [(3, "self.created")]),
        (
            "def test_a():\n    t = TestTable()\n    if 0:\n        t.cases = []\n    t.cases.pop()\n",
            None,
            [(5, "TestTable.cases")],
        ),
        (
            "def test_a():\n    t = TestTable()\n    t.cases = []\n    t = TestTable()\n    t.cases.pop()\n",
            None,
            [(5, "TestTable.cases")],
        ),
        # the project's table of the same name, patched by its module's name
        ("def test_a(module_mocker):\n    module_mocker.patch('myapp.urls.CASES', [])\n", None, []),
    ],
)
def test_what_an_instance_or_a_new_subclass_holds_of_its_own(
    source: str, owner: str | None, found: list[tuple[int, str]]
) -> None:
    """A class's data is followed through its instances and new subclasses only where they
    share it: a helper's ``__init__`` or a pydantic model copies its defaults, a unittest setup
    makes ``self.created`` again for each test, an attribute set on the instance or subclass is
    its own -- each REJECTED when an instance's list was taken for its class's."""
    data = datause.module_data(ast.parse(OWN))
    assert data.shared >= {"TestTable", "TestUsers", "TestMarked"} and not data.shared & {"TestThing", "TestModel"}
    fresh = data.fresh or {}
    assert fresh["TestUsers"] == {"created"} and not (fresh["TestCopy"] or fresh["TestPlain"] or fresh["TestMore"])
    assert _found(source, owner, baseline=data) == found


def test_a_setup_makes_fresh_only_a_new_container_of_literals() -> None:
    """What ``setup_method`` binds on ``self`` is each test's own only where nothing in it is
    another object's: not a copy of the class's list, nor a dict holding it by a keyword."""
    bound = {
        "a": "[]",
        "b": "defaultdict(list)",
        "c": "{'k': (1, -2)}",
        "d": "list(self.cases)",
        "e": "dict(k=self.cases)",
        "f": "[*CASES]",
        "g": "self.CASES",
    }
    body = "".join("        self.%s = %s\n" % item for item in bound.items())
    data = datause.module_data(ast.parse("class TestT:\n    cases = [1]\n\n    def setup_method(self):\n" + body))
    assert (data.fresh or {})["TestT"] == {"a", "b", "c"}


def test_pytest_mocks_wider_fixtures_are_undone_after_the_existing_tests() -> None:
    """pytest-mock's ``module_mocker`` (``session_mocker``...) undoes its patches when its module
    ends, whatever the test does with what it hands back (a mock: entered, or its ``stop``);
    ``class_mocker`` in a class, its tests after the new one's; outside one pytest gives it the
    test's scope."""
    patch = "mocker.patch.object(TestTable, 'cases', [])"
    assert _found("def test_y(module_mocker):\n    with module_%s:\n        pass\n" % patch) == [(2, "TestTable.cases")]
    assert _found("def test_y(module_mocker):\n    m = module_%s\n    m.stop()\n" % patch) == [(2, "TestTable.cases")]
    assert _found("def test_y(module_mocker):\n    module_%s\n    module_mocker.stopall()\n" % patch) == []
    in_class = "class TestTable:\n    def test_y(self, class_mocker):\n        class_%s\n" % patch
    assert _found(in_class, owner="TestTable") == [(3, "TestTable.cases")]
    assert _found("def test_y(class_mocker):\n    class_%s\n" % patch) == []


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
        (
            "class TestNew(TestTable):\n    def test_x(self):\n        self.cases.pop()\n",
            None,
            [(3, "TestTable.cases")],
        ),
        ("getattr(TestTable, 'cases').pop()\n", None, [(1, "TestTable.cases")]),
        ("k = 'cases'\ngetattr(TestTable, k).pop()\n", None, [(2, "getattr")]),
        ("TestTable.extra = 1\n", None, [(1, "TestTable.extra")]),
        ("BASE = '/tmp'\n", None, [(1, "BASE")]),
        ("exec('CASES.clear()')\n", None, [(1, "exec")]),
        ("globals()['CASES'].pop()\n", None, [(1, "CASES")]),
        ("import sys\nsys.modules[__name__].CASES.clear()\n", None, [(2, "CASES")]),
        ("import importlib\nimportlib.import_module(__name__).CASES[0] = 1\n", None, [(2, "CASES")]),
        ("_c = CASES or []\n_c.pop()\n", None, [(2, "CASES")]),
        ("_c = CASES if True else []\n_c.sort()\n", None, [(2, "CASES")]),
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


def test_a_table_handed_to_a_function_the_candidate_added_is_judged_where_it_uses_it() -> None:
    """A helper the candidate added in the module is followed: its parameter is the table.
    One the module only imports (from a new helper module) is code nobody reviewed."""
    source = "def _trim(x):\n    x.pop()\n\n\n_trim(CASES)\nlen(CASES)\n"
    assert _found(source, added=frozenset({"_trim"})) == [(2, "CASES")]
    source = "def _check(cases, n=0):\n    for a, b in cases:\n        assert a\n\n\n_check(CASES)\n"
    assert _found(source, added=frozenset({"_check"})) == []
    assert _found("from helper import trim\ntrim(CASES)\n", added=frozenset({"trim"})) == [(2, "CASES")]
    # a module the candidate imports is not its code: ``import pytest`` beside a parametrize
    assert _found("import pytest\npytest.mark.parametrize('c', CASES)\n", added=frozenset({"pytest"})) == []


def test_another_test_modules_data_through_every_way_of_importing_it() -> None:
    modules = {"test_tables": DATA}
    for source in (
        "import test_tables\ntest_tables.CASES.pop()\n",
        "import tests.test_tables\ntests.test_tables.TestTable.cases.clear()\n",
        "from tests import test_tables as t\ndel t.CASES[0]\n",
        "from test_tables import CASES\nCASES.append(1)\n",
        "from test_tables import TestTable\nTestTable.cases[:] = []\n",
        "from tests.test_tables import *\nCASES.pop()\n",
        "from tests.test_tables import *\nTestTable.cases.pop()\n",
    ):
        tree = ast.parse(source)
        assert [m.line for m in datause.misuses(tree.body, datause.imported_data(tree, modules))] == [2], source
    # a patcher given the module by name, imported or not, and kept in force
    for source, name in [
        ("from unittest import mock\nmock.patch('tests.test_tables.CASES', []).start()\n", "test_tables.CASES"),
        (
            "from unittest.mock import patch\npatch('test_tables.TestTable.cases', []).start()\n",
            "test_tables.TestTable.cases",
        ),
        ("from unittest import mock\nmock.patch.multiple('tests.test_tables', CASES=[]).start()\n", "test_tables"),
        (
            "import test_tables\nfrom unittest import mock\nmock.patch('test_tables.CASES', []).start()\n",
            "test_tables.CASES",
        ),
        ("import pytest\nmp = pytest.MonkeyPatch()\nmp.setattr('tests.test_tables.CASES', [])\n", "test_tables.CASES"),
    ]:
        tree = ast.parse(source)
        assert [m.name for m in datause.misuses(tree.body, datause.imported_data(tree, modules))] == [name], source
    for honest in (  # undone where the test ends, or another module's
        "from unittest import mock\nwith mock.patch('tests.test_tables.CASES', []):\n    pass\n",
        "from unittest import mock\n@mock.patch('tests.test_tables.CASES', [])\ndef test_x():\n    pass\n",
        "def test_x(monkeypatch):\n    monkeypatch.setattr('tests.test_tables.CASES', [])\n",
        "def test_x(mocker):\n    mocker.patch('tests.test_tables.CASES', [])\n",
        "from unittest import mock\nmock.patch('requests.get').start()\n",
    ):
        tree = ast.parse(honest)
        assert not list(datause.misuses(tree.body, datause.imported_data(tree, modules))), honest
    for source, name in [
        ("import sys\nsys.modules['test_tables'].CASES.pop()\n", "test_tables"),
        ("import pytest\npytest.importorskip('tests.test_tables').CASES.pop()\n", "tests.test_tables"),
        (
            "import sys\nfor m in list(sys.modules.values()):\n    getattr(m, 'CASES', []).clear()\n",
            "sys.modules.values",
        ),
    ]:
        assert [m.name for m in datause.string_reach(ast.parse(source), modules)] == [name], source
    assert not list(datause.string_reach(ast.parse("import pytest\nnp = pytest.importorskip('numpy')\n"), modules))


#: A baseline module building its tables other ways than by a display.
BUILT = (
    "import pytest\n\nROWS = [{'n': 2, 'want': 4}]\nBYOP = {'double': [2, 4]}\nSORTED = sorted([(1, 2)])\n"
    "JOINED = [(2, 4)] + [(3, 6)]\nPAIR, OTHER = [(1, 2)], []\nLOADED = _load()\nMAYBE = [(1, 2)] if pytest else []\n"
    "DEFAULTS = {'offset': 0}\nBASE = __file__\n\n\ndef _load():\n    return [(4, 8)]\n\n\n"
    "class TestTable:\n    cases = [(5, 10)]\n    more = ROWS\n\n    def test_more(self):\n        pass\n"
)


#: A fixture the candidate added, handing a table to the tests requesting it.
FIXTURE = "import pytest\n\n@pytest.fixture\ndef rows():\n    return ROWS\n"


def test_a_table_built_other_than_by_a_display_is_a_table() -> None:
    data = datause.module_data(ast.parse(BUILT))
    assert data.names == {"ROWS", "BYOP", "SORTED", "JOINED", "PAIR", "OTHER", "LOADED", "MAYBE", "DEFAULTS"}
    assert data.loose == {"BASE"} and data.members == {"TestTable": frozenset({"cases", "more"})}


@pytest.mark.parametrize(
    ("source", "owner", "found"),
    [
        # a call's value followed: the table handed back, an item of it, a method of it
        ("getattr(ROWS, 'pop')()\n", None, [(1, "ROWS")]),
        ("import typing\ntyping.cast(list, ROWS).pop()\n", None, [(2, "ROWS")]),
        ("max(SORTED, []).pop()\n", None, [(1, "SORTED")]),
        ("import contextlib\nwith contextlib.nullcontext(ROWS) as _c:\n    _c.pop()\n", None, [(3, "ROWS")]),
        ("import functools\nfunctools.partial(list.pop, ROWS)()\n", None, [(2, "ROWS")]),
        ("import pytest\n_mp = pytest.MonkeyPatch()\n_mp.delitem(BYOP, 'double')\n", None, [(3, "BYOP")]),
        ("globals().get('ROWS').pop()\n", None, [(1, "ROWS")]),
        ("import sys\nsys._getframe().f_globals['ROWS'].pop()\n", None, [(2, "ROWS")]),
        ("def test_aaa(request):\n    request.module.ROWS.pop()\n", None, [(2, "ROWS")]),
        # the module object itself, its names out of sight
        ("import sys\nsetattr(sys.modules[__name__], 'ROWS', [])\n", None, [(2, "setattr")]),
        ("import sys\nm = sys.modules[__name__]\nm.ROWS.pop()\n", None, [(2, "sys.modules")]),
        ("import sys\nsys.modules[__name__].__dict__['ROWS'].pop()\n", None, [(2, "ROWS")]),
        ("BYOP.get('double').pop()\n", None, [(1, "BYOP")]),
        ("for _v in BYOP.values():\n    _v.pop()\n", None, [(2, "BYOP")]),
        ("for _r in ROWS:\n    _r['want'] = 0\n", None, [(2, "ROWS")]),
        ("for i, _r in enumerate(ROWS):\n    _r.update(want=0)\n", None, [(2, "ROWS")]),
        ("BYOP['double'].sort()\nBYOP['double'].__init__()\n", None, [(1, "BYOP"), (2, "BYOP")]),
        ("_row = ROWS[0]\n_row.clear()\n", None, [(2, "ROWS")]),
        ("import heapq\nheapq.heappop(SORTED)\n", None, [(2, "SORTED")]),
        ("import random\nrandom.shuffle(JOINED)\nrandom.Random(0).shuffle(PAIR)\n", None, [(2, "JOINED"), (3, "PAIR")]),
        # tables not made by a display, and a class's attribute naming the module's table
        ("_c = LOADED\n_c.pop()\n", None, [(2, "LOADED")]),
        ("def _trim(x):\n    x.clear()\n\n\n_trim(MAYBE)\n", None, [(2, "MAYBE")]),
        ("def _trim(x):\n    x.clear()\n\n\n_trim(MAYBE)\n\n\ndef _trim(x):\n    pass\n", None, [(2, "MAYBE")]),
        ("def test_x():\n    c = SORTED\n    c += [(9, 9)]\n", None, [(3, "SORTED")]),
        (
            FIXTURE + "\n\ndef test_x(rows):\n    rows.pop()\n",
            None,
            [(9, "ROWS")],
        ),
        (
            FIXTURE + "\n\nclass TestN:\n    def test_x(self, rows):\n        rows.clear()\n",
            None,
            [(10, "ROWS")],
        ),
        ("class TestTable:\n    def test_x(self):\n        self.more.pop()\n", "TestTable", [(3, "self.more")]),
        # reads: what honest tests do with them
        ("cfg = {**DEFAULTS, 'offset': 1}\n", None, []),
        ("import collections, heapq, bisect\ncollections.Counter(SORTED)\nheapq.nsmallest(1, SORTED)\n", None, []),
        ("import bisect\nbisect.bisect_left(SORTED, (1, 2))\ndict.fromkeys(DEFAULTS)\n", None, []),
        ("def test_x(monkeypatch):\n    monkeypatch.setitem(DEFAULTS, 'offset', 1)\n", None, []),
        ("def test_x():\n    cases = SORTED\n    cases = cases[:1]\n    assert cases\n", None, []),
        ("def test_x():\n    for r in ROWS:\n        assert r['n'] * 2 == r['want'] and str(r).upper()\n", None, []),
        ("def test_x():\n    assert [n for n, want in JOINED] == [2, 3]\n", None, []),
        ("def test_x(full=False):\n    cases = JOINED if full else []\n    assert cases == sorted(cases)\n", None, []),
        ("def g():\n    yield from SORTED\n", None, []),
        ("def test_x():\n    seen = {}\n    for n, want in SORTED:\n        seen[n] = want\n", None, []),
        ("def test_x():\n    for n, want in SORTED:\n        n += 1\n        assert n\n", None, []),
        ("import contextlib\nwith contextlib.nullcontext(ROWS) as rows:\n    assert rows[0]['n']\n", None, []),
        ("x = BYOP.get('double')\nassert x and x.index(2) == 0\n", None, []),
        # a fixture the candidate added handing a table to its new tests
        (
            FIXTURE + "\n\ndef test_x(rows):\n    assert rows\n",
            None,
            [],
        ),
        (
            FIXTURE.replace("def rows():\n    return", "def _c():\n    yield").replace("fixture", "fixture(name='c')")
            + "\n\ndef test_x(c):\n    assert c\n",
            None,
            [],
        ),
        # an object of the project's made from a table (prettytable 3.18's own new test)
        ("def test_x():\n    table = Table(ROWS)\n    table.add_row([1])\n    table.update()\n", None, []),
    ],
)
def test_what_added_code_does_with_tables_built_other_ways(
    source: str, owner: str | None, found: list[tuple[int, str]]
) -> None:
    """A review's probes: a call's value, a ``with`` or ``for`` target, an item of a table, a
    table built by ``sorted`` or a loader -- each let added code trim the cases unseen; and
    honest reads of them (``{**DEFAULTS}``, ``collections.Counter``) were findings."""
    added = frozenset({"_c", "_trim", "_row", "_mp"})
    assert _found(source, owner, added, datause.module_data(ast.parse(BUILT))) == found


#: A baseline module with a table of groups, a config and a factory's object (no table).
GROUPED = (
    "import argparse\n\nCASES = [(2, 4)]\nGROUPS = {'small': [(2, 4)]}\nCONFIG = {'opts': {'strict': True}}\n\n\n"
    "def _make_parser():\n    parser = argparse.ArgumentParser()\n    return parser\n\n\nPARSER = _make_parser()\n"
)


@pytest.mark.parametrize(
    ("source", "found"),
    [
        # a name bound to a table is the table only where that binding may reach (a review's probes)
        ("def test_x():\n    ids = [c[0] for c in CASES]\n    c = {}\n    c['x'] = ids\n", []),
        ("def test_x():\n    for r in CASES:\n        pass\n    for r in [{'a': 1}]:\n        r['b'] = 2\n", []),
        ("def test_x():\n    for k, v in GROUPS.items():\n        v = list(v)\n        v.append((3, 6))\n", []),
        ("def test_x():\n    o = CONFIG.get('opts')\n    o = dict(o)\n    o['strict'] = False\n", []),
        ("def _check(cases):\n    assert cases\n\n\ndef test_x():\n    _check(CASES)\n    cases = []\n", []),
        (
            "def test_x(flag):\n    if flag:\n        c = CASES\n    else:\n        c = {}\n    c.pop()\n",
            [(6, "CASES")],
        ),
        ("def test_x():\n    c = []\n    for i in range(2):\n        c.clear()\n        c = CASES\n", [(4, "CASES")]),
        (
            "def test_x():\n    c = []\n    try:\n        c = CASES\n    except E:\n        pass\n    c.pop()\n",
            [(7, "CASES")],
        ),
        ("def _setup():\n    global _c\n    _c = CASES\n\n\ndef test_x():\n    _c.pop()\n", [(7, "CASES")]),
        # a parameter named like the table is its function's own, not the module's table
        (
            "def _check(CASES):\n    assert CASES\n\n\ndef test_a():\n    global CASES\n    _check(CASES)\n"
            "    CASES = CASES[:1]\n",
            [(8, "CASES")],
        ),
        # a helper is followed only where the call surely runs its body
        ("def _h(**kw):\n    kw['c'].pop()\n\n\ndef test_x():\n    _h(c=CASES)\n", [(6, "CASES")]),
        ("def _h(a, /, **kw):\n    kw['a'].pop()\n\n\ndef test_x():\n    _h(1, a=CASES)\n", [(6, "CASES")]),
        (
            "def _w(f):\n    return lambda c: c.pop()\n\n\n@_w\ndef _h(c):\n    assert c\n\n\n_h(CASES)\n",
            [(10, "CASES")],
        ),
        ("def _h(c):\n    assert c\n\n\n_h = list.pop\n_h(CASES)\n", [(6, "CASES")]),
        ("def _h(c=None):\n    c.pop()\n\n\ndef test_x():\n    _h(c=CASES)\n", [(2, "CASES")]),
        # code written in a test, handed the table or an item of it
        ("def test_x():\n    def trim(c):\n        c.pop()\n    trim(CASES)\n", [(3, "CASES")]),
        ("def test_x():\n    trim = lambda c: c.pop()\n    trim(CASES)\n", [(3, "CASES")]),
        (
            "def test_x():\n    def trim(c):\n        c.pop()\n    for v in GROUPS.values():\n        trim(v)\n",
            [(3, "GROUPS")],
        ),
        # handed to an object the candidate added, not to a module it imports
        ("_keep = []\n\n\ndef test_x():\n    _keep.append(CASES)\n", [(5, "CASES")]),
        ("import json\n\n\ndef test_x():\n    assert json.dumps(CASES)\n", []),
        # an unbound method reading an item, a fixture asked for by a computed name
        ("def test_x():\n    dict.get(GROUPS, 'small').pop()\n", [(2, "GROUPS")]),
        (
            "import pytest\n\n\n@pytest.fixture\ndef cases():\n    return CASES\n\n\n"
            "def test_x(request):\n    request.getfixturevalue('cases').pop()\n",
            [(6, "CASES")],
        ),
        # a loop's item handed to a mutator as what it adds, not what it changes
        ("import heapq\n\n\ndef test_x():\n    heap = []\n    for c in CASES:\n        heapq.heappush(heap, c)\n", []),
        # the module's factory's object is no table: its methods are the project's
        ("def test_x():\n    assert PARSER.parse_args(['--n', '3']) and PARSER.__class__\n", []),
        # a name bound where Python may not evaluate it, or evaluates it in another order
        ("def test_x():\n    [c := CASES for _ in [0]]\n    c.pop()\n", [(3, "CASES")]),
        ("[_c := CASES for _ in [0]]\n\n\ndef test_x():\n    _c.pop()\n", [(5, "CASES")]),
        (
            "def test_x():\n    c = CASES\n    if False and (c := []):\n        pass\n    else:\n        c.pop()\n",
            [(6, "CASES")],
        ),
        ("def test_x():\n    c = CASES\n    x = 1 if True else (c := [])\n    c.pop()\n", [(4, "CASES")]),
        ("def test_x():\n    c = CASES\n    assert True, (c := [])\n    c.pop()\n", [(4, "CASES")]),
        ("def test_x():\n    c.pop() if (c := CASES) else None\n", [(2, "CASES")]),
        ("def test_x():\n    d = {}\n    d[c.pop()] = (c := CASES)\n", [(3, "CASES")]),
        ("def test_x():\n    c = [1]\n    while c.pop() == 1:\n        c = CASES\n", [(3, "CASES")]),
        ("def test_x():\n    c = CASES\n    c: list\n    c.pop()\n", [(4, "CASES")]),
        ("def test_x():\n    for v in GROUPS.values():\n        v += []\n        del v[:]\n", [(4, "GROUPS")]),
        # bound by a function defined below its caller, or by a method's ``global``
        (
            "def test_x():\n    _setup()\n    _c.pop()\n\n\ndef _setup():\n    global _c\n    _c = CASES\n",
            [(3, "CASES")],
        ),
        # a comprehension's variable named like the table is the comprehension's
        ("def test_x():\n    assert [CASES for CASES in [1]]\n    CASES.pop()\n", [(3, "CASES")]),
        # a callable the check cannot read, a method of a class the candidate wrote
        ("def test_x():\n    f = list.pop\n    f(CASES)\n", [(3, "CASES")]),
        (
            "class TestNew:\n    def _trim(self, c):\n        c.pop()\n\n"
            "    def test_x(self):\n        self._trim(CASES)\n",
            [(6, "CASES")],  # a method through ``self`` is added code, not followed (a subclass may override it)
        ),
        (
            "def test_x():\n    class T:\n        @staticmethod\n        def go(c):\n"
            "            c.pop()\n\n    T.go(CASES)\n",
            [(7, "CASES")],
        ),
        ("def _h(c):\n    assert c\n\n\n_h.__code__ = (lambda c: c.pop()).__code__\n_h(CASES)\n", [(6, "CASES")]),
        # a ninth review's: a pattern that need not match, a type held in a name, a fixture
        # asked for through an alias of getfixturevalue, a method replaced or inherited
        (
            "def test_x():\n    c = CASES\n    match 1:\n        case [] as c:\n            pass\n    c.pop()\n",
            [(6, "CASES")],
        ),
        ("L = list\n\n\ndef test_x():\n    L.pop(CASES)\n", [(5, "CASES")]),
        (
            "import pytest\n\n\n@pytest.fixture\ndef cases():\n    return CASES\n\n\n"
            "def test_x(request):\n    g = request.getfixturevalue\n    g('cases').pop()\n",
            [(6, "CASES")],
        ),
        (
            "class TestNew:\n    def _check(self, c):\n        assert c\n\n    def test_x(self):\n"
            "        self._check(CASES)\n\n\nclass TestNewer(TestNew):\n    def _check(self, c):\n        c.pop()\n",
            [(6, "CASES")],
        ),
        (
            "class _Base:\n    def _trim(self, c):\n        c.pop()\n\n\nclass TestNew(_Base):\n"
            "    def test_x(self):\n        self._trim(CASES)\n",
            [(8, "CASES")],
        ),
        ("def _h(c):\n    assert c\n\n\nsetattr(_h, '__code__', None)\n_h(CASES)\n", [(6, "CASES")]),
        # a tenth review's: callables a call, a loop, a ``with`` or a pattern hands
        ("import functools\n\n\ndef test_x():\n    f = functools.partial(list.pop)\n    f(CASES)\n", [(6, "CASES")]),
        ("def test_x():\n    for f in (list.pop,):\n        f(CASES)\n", [(3, "CASES")]),
        ("def _pick():\n    return list.pop\n\n\ndef test_x():\n    f = _pick()\n    f(CASES)\n", [(7, "CASES")]),
        ("def test_x():\n    if (f := list.pop):\n        f(CASES)\n", [(3, "CASES")]),
        (
            "from unittest import mock\n\n\ndef test_x():\n    spy = mock.Mock(side_effect=list.pop)\n    spy(CASES)\n",
            [(6, "CASES")],
        ),
        # ... and honest code its rules refused: a helper handed on, a base's read-only helper
        (
            "def _check(c):\n    assert c\n\n\ndef test_x():\n    _check(CASES)\n    assert list(map(_check, CASES))\n",
            [],
        ),
        (
            "class _Base:\n    def _rows(self, c):\n        assert c\n\n\nclass TestNew(_Base):\n"
            "    def test_x(self):\n        self._rows(CASES)\n",
            [(8, "CASES")],  # even reading: ``--expected-change`` declares it
        ),
        # honest: a partial, a mock, a closure of the candidate's, its checks in a loop
        ("import functools\n\n\ndef test_x():\n    check = functools.partial(sorted, key=str)\n    check(CASES)\n", []),
        ("from unittest import mock\n\n\ndef test_x():\n    spy = mock.Mock()\n    spy(CASES)\n", []),
        ("def test_x():\n    for check in (len, sorted):\n        check(CASES)\n", []),
        # an eleventh review's: a method through self, replaced or inherited, is not followed;
        # a function's innards reached; a mock configured after; a helper's parameter called
        (
            "class _Pop:\n    def _check(self, c):\n        c.pop()\n\n\nclass TestNew:\n"
            "    def _check(self, c):\n        assert c\n\n    def test_x(self):\n        self._check(CASES)\n",
            [(11, "CASES")],
        ),
        ("def _check(c):\n    assert c\n\n\n(_check or None).__code__ = None\n_check(CASES)\n", [(6, "CASES")]),
        (
            "from unittest import mock\n\n\ndef test_x():\n"
            "    m = mock.Mock()\n    m.side_effect = list.pop\n    m(CASES)\n",
            [(7, "CASES")],
        ),
        ("def _call(f):\n    f(CASES)\n\n\n_call(list.pop)\n", [(2, "CASES")]),
        ("def test_x(f=list.pop):\n    f(CASES)\n", [(2, "CASES")]),
        ("def test_x():\n    [f(CASES) for f in (list.pop,)]\n", [(2, "CASES")]),
        ("import types\n\n\ndef test_x():\n    types.SimpleNamespace(trim=list.pop).trim(CASES)\n", [(5, "CASES")]),
        ("import builtins\n\n\ndef test_x():\n    builtins.list.pop(CASES)\n", [(5, "CASES")]),
        (
            "class TestNew:\n    def setup_method(self):\n        self.trim = list.pop\n"
            "\n    def test_x(self):\n        self.trim(CASES)\n",
            [(6, "CASES")],
        ),
        # a twelfth review's: a value a builtin or the project made, a list of marks built up
        ("def test_x():\n    f = eval('list.pop', None)\n    f(CASES)\n", [(3, "CASES")]),
        ("from calc.ops import make\n\n\ndef test_x():\n    f = make()\n    f(CASES)\n", [(6, "CASES")]),
        (
            "def test_x(mocker):\n    s = mocker.stub()\n    setattr(s, 'side_effect', list.pop)\n    s(CASES)\n",
            [(4, "CASES")],
        ),
        ("def test_x():\n    def test_inner(f):\n        f(CASES)\n\n    test_inner(list.pop)\n", [(3, "CASES")]),
        # honest: a library's callable, a fixture's stub
        ("import operator\n\n\ndef test_x():\n    first = operator.itemgetter(0)\n    assert first(CASES)\n", []),
        ("def test_x(mocker):\n    spy = mocker.stub()\n    spy(CASES)\n", []),
        (
            "import functools\n\n\n"
            "def test_x():\n    by_n = functools.partial(sorted, key=lambda r: r[0])\n    by_n(CASES)\n",
            [],
        ),
        (
            "import json\n\n\ndef test_x():\n    enc = json.JSONEncoder()\n    enc.indent = 2\n    enc.encode(CASES)\n",
            [],
        ),
        ("from unittest import mock\n\n\ndef test_x():\n    m = mock.Mock(return_value=[])\n    m(CASES)\n", []),
        (
            "class TestNew:\n    def setup_method(self):\n        self.encode = repr\n"
            "\n    def test_x(self):\n        self.encode(CASES)\n",
            [],
        ),
        # honest: a library's object, a context manager, a fixture
        ("import logging\n\nlog = logging.getLogger(__name__)\n\n\ndef test_x():\n    log.info('%s', CASES)\n", []),
        (
            "import contextlib\n\n\n@contextlib.contextmanager\ndef _ctx(cases):\n    yield list(cases)\n\n\n"
            "def test_x():\n    with _ctx(CASES) as c:\n        assert c\n",
            [],
        ),
        (
            "import pytest\n\n\n@pytest.fixture\ndef cases():\n    return CASES\n\n\n"
            "def test_x(cases):\n    assert cases\n\n\n"
            "def test_y(request):\n    assert request.getfixturevalue('num')\n",
            [],
        ),
    ],
)
def test_a_name_is_the_table_where_its_binding_reaches(source: str, found: list[tuple[int, str]]) -> None:
    """A seventh review's probes: aliases kept by name, not by scope and order, made honest
    reuse of a name a finding and let a parameter named like the table hide its rebinding; the
    helper-following trusted a ``def`` where the call may run other code. An eighth's: bindings
    Python may skip or evaluates out of the text's order, aliases bound by code below their use,
    callables the check cannot read; and honest code the seventh's rules refused."""
    added = frozenset({"_check", "_h", "_w", "_keep", "cases", "json", "_setup", "_c", "log", "_ctx", "L"})
    assert _found(source, added=added, baseline=datause.module_data(ast.parse(GROUPED))) == found


def test_a_scan_of_the_loaded_modules_is_a_finding_where_it_reaches_their_names() -> None:
    """A fixture restoring ``sys.modules`` and a leak test counting objects scan without reaching
    a test module's data; a loop over them reaching ``CASES`` does."""
    modules = {"test_tables": DATA}
    honest = (
        "import gc, sys, pytest\n\n\n@pytest.fixture\ndef clean():\n    saved = sys.modules.copy()\n    yield\n"
        "    sys.modules.clear()\n    sys.modules.update(saved)\n\n\n"
        "def test_leak():\n    assert len([o for o in gc.get_objects() if isinstance(o, int)]) >= 0\n"
    )
    assert not list(datause.string_reach(ast.parse(honest), modules))
    for reach in ("m.CASES.pop()", "vars(m).get('CASES', []).clear()", "m.__dict__.get('CASES', []).clear()"):
        source = "import sys\n\n\ndef test_x():\n    for m in sys.modules.copy().values():\n        %s\n" % reach
        assert [m.name for m in datause.string_reach(ast.parse(source), modules)] == ["sys.modules.copy"], reach


M = "from unittest import mock\n\n"
MP = "import pytest\n\n"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        # a patch nothing undoes: started, entered by hand, made at import, kept open by a fixture
        (M + "def test_x():\n    mock.patch.object(TestTable, 'cases', []).start()\n", [(4, "TestTable.cases")]),
        (M + "mock.patch.object(TestTable, 'test_more', None).start()\n", [(3, "TestTable.test_more")]),
        (M + "def test_x():\n    mock.patch(__name__ + '.CASES', []).start()\n", [(4, "__name__")]),
        (
            "from unittest.mock import patch\n\ndef test_x():\n    patch('tests.test_calc.CASES', []).start()\n",
            [(4, "CASES")],
        ),
        ("from unittest.mock import patch as P\nP.object(TestTable, 'cases', []).start()\n", [(2, "TestTable.cases")]),
        (M + "mock.patch(target=__name__ + '.CASES', new=[]).start()\n", [(3, "__name__")]),
        (M + "def test_x():\n    mock.patch.dict(globals(), {'CASES': []}).start()\n", [(4, "globals")]),
        (
            M + "def test_x():\n    p = mock.patch.object(TestTable, 'cases', [])\n    p.__enter__()\n",
            [(4, "TestTable.cases")],
        ),
        (M + "p = mock.patch.object\np(TestTable, 'cases', []).start()\n", [(4, "TestTable.cases")]),
        # pytest-mock's fixtures of a wider scope: undone when the module (session...) ends
        (
            "def test_x(module_mocker):\n    module_mocker.patch.object(TestTable, 'cases', [])\n",
            [(2, "TestTable.cases")],
        ),
        ("def test_x(session_mocker):\n    session_mocker.patch('tests.test_calc.CASES', [])\n", [(2, "CASES")]),
        (
            MP + "def test_x():\n    mp = pytest.MonkeyPatch()\n    mp.setattr(TestTable, 'cases', [])\n",
            [(5, "TestTable.cases")],
        ),
        (MP + "pytest.MonkeyPatch().setattr(TestTable, 'cases', [])\n", [(3, "TestTable.cases")]),
        (
            MP + "monkeypatch = pytest.MonkeyPatch()\nmonkeypatch.setattr(TestTable, 'cases', [])\n",
            [(4, "TestTable.cases")],
        ),
        (
            MP + "with pytest.MonkeyPatch.context() as mp:\n    pass\nmp.setattr(TestTable, 'cases', [])\n",
            [(5, "TestTable.cases")],
        ),
        (
            MP + M + "@pytest.fixture(scope='module')\ndef trim():\n"
            "    with mock.patch.object(TestTable, 'cases', []):\n        yield\n",
            [(7, "TestTable.cases")],
        ),
        # the existing class by its methods' names for it
        (
            M + "class TestTable:\n    @classmethod\n    def setup_class(cls):\n"
            "        mock.patch.object(cls, 'cases', []).start()\n",
            [(6, "TestTable.cases")],
        ),
        # an existing class handed whole to a function the candidate wrote, which may change it
        ("def _trim(c):\n    c.cases.pop()\n\n_trim(TestTable)\n", [(4, "TestTable")]),
        (M + "def _p(c):\n    mock.patch.object(c, 'cases', []).start()\n\n_p(TestTable)\n", [(6, "TestTable")]),
        # undone where the test ends: a with item, a decorator, stopped or undone in its scope
        (M + "def test_x():\n    with mock.patch.object(TestTable, 'cases', []):\n        pass\n", []),
        ("from unittest.mock import patch\n\n@patch.object(TestTable, 'cases', [])\ndef test_x():\n    pass\n", []),
        (M + "def test_x():\n    p = mock.patch.object(TestTable, 'cases', [])\n    with p:\n        pass\n", []),
        (
            M + "class TestNew:\n    def setup_method(self):\n        p = mock.patch.object(TestTable, 'x', 1)\n"
            "        p.start()\n        self.addCleanup(p.stop)\n",
            [],
        ),
        (MP + "def test_x():\n    mp = pytest.MonkeyPatch()\n    mp.setattr(TestTable, 'x', 1)\n    mp.undo()\n", []),
        (
            MP
            + M
            + "@pytest.fixture\ndef trim():\n    with mock.patch.object(TestTable, 'cases', []):\n        yield\n",
            [],
        ),
        # the fixtures pytest undoes after the test
        ("def test_x(monkeypatch):\n    monkeypatch.setattr(TestTable, 'cases', [])\n", []),
        ("def test_x(mocker):\n    mocker.patch.object(TestTable, 'cases', [])\n", []),
        (
            "def test_x(monkeypatch):\n"
            "    with monkeypatch.context() as m:\n        m.setattr(TestTable, 'cases', [])\n",
            [],
        ),
        (
            MP + "def test_x():\n    with pytest.MonkeyPatch.context() as mp:\n        mp.setattr(TestTable, 'x', 1)\n",
            [],
        ),
        # the project's code patched, another object's ``patch``; an existing class read or handed
        # to a library (a review's probes)
        (M + "import calc\nmock.patch.object(calc, 'double', None).start()\n", []),
        (M + "mock.patch('calc.ops.double', None).start()\n", []),
        ("def test_x(client):\n    client.patch(BASE, json={})\n    client.setattr(BASE, 1)\n", []),
        (M + "def test_x():\n    m = mock.create_autospec(TestTable)\n    assert m\n", []),
        ("from inspect import getmembers\n\ndef test_x():\n    assert getmembers(TestTable)\n", []),
    ],
)
def test_a_patch_of_the_tests_data_that_nothing_undoes(source: str, found: list[tuple[int, str]]) -> None:
    """A patch of an existing test's data or class kept in force past the test that made it --
    ``mock.patch...start()``, a ``MonkeyPatch()`` never undone, a ``with`` a module-scoped
    fixture holds open -- trims the cases for every test after it, as an assignment would. Made
    in a ``with``, as a decorator, stopped or undone in its scope, or through pytest's
    ``monkeypatch`` or pytest-mock's ``mocker``, it is undone where its test ends. An existing
    class handed whole to the candidate's own function may be changed there, unseen. Each is
    named by what it reaches, so it can be declared with ``--expected-change``."""
    tree = ast.parse(source)
    added = frozenset(n.name for n in tree.body if isinstance(n, ast.FunctionDef))
    added |= frozenset(pyscan.bindings([n for n in tree.body if not isinstance(n, ast.FunctionDef)]))
    assert _found(source, added=added) == found


@pytest.mark.parametrize(
    ("source", "found"),
    [
        # held where the check does not follow it: bound, put in a container, handed back
        ("K = TestTable\nK.cases.pop()\n", [(1, "TestTable")]),
        ("(K := TestTable).cases.clear()\n", [(1, "TestTable.cases"), (1, "TestTable")]),
        ("(_t := TestTable()).cases.clear()\n", [(1, "TestTable.cases")]),
        ("def test_a():\n    k = TestTable\n    k.cases = []\n", [(2, "TestTable")]),
        ("for K in [TestTable]:\n    K.cases.pop()\n", [(1, "TestTable")]),
        ("def _k():\n    return TestTable\n\n\n_k().cases.pop()\n", [(2, "TestTable")]),
        ("def _trim(k=TestTable):\n    k.cases.pop()\n", [(1, "TestTable")]),
        ("HOLD = {'t': TestTable}\n", [(1, "TestTable")]),
        # the class's data through a new instance (a review's probe, CERTIFIED): its list is the class's
        ("TestTable().cases.pop()\n", [(1, "TestTable.cases")]),
        ("type(TestTable()).cases.clear()\n", [(1, "TestTable.cases")]),
        ("def test_a():\n    assert TestTable().cases[0] == (5, 10)\n", []),
        # a new instance bound to a name, a new subclass: the class's data by another name (CERTIFIED
        # before), named by the class it reaches
        ("def test_a():\n    t = TestTable()\n    t.cases.pop()\n", [(3, "TestTable.cases")]),
        ("def test_a():\n    if (t := TestTable()):\n        t.cases.clear()\n", [(3, "TestTable.cases")]),
        ("def _trim(*, t=TestTable()):\n    t.cases.pop()\n", [(2, "TestTable.cases")]),
        ("class _K(TestTable):\n    pass\n\n\n_K.cases.pop()\n", [(5, "TestTable.cases")]),
        (
            "class _K(TestTable):\n    pass\n\n\nclass _L(_K):\n    pass\n\n\n_L().cases.clear()\n",
            [(9, "TestTable.cases")],
        ),
        (
            "class _K(TestTable):\n    pass\n\n\nclass _L(_K):\n    def trim(self):\n        self.cases.pop()\n",
            [(7, "TestTable.cases")],
        ),
        (
            "class _K(TestTable):\n    pass\n\n\ndef test_a():\n    t = _K()\n    t.cases.pop()\n",
            [(7, "TestTable.cases")],
        ),
        ("class _K(TestTable):\n    pass\n\n\nK = _K\n", [(5, "TestTable")]),
        # an instance used as tests use one, a subclass with data of its own
        ("def test_a():\n    t = TestTable()\n    assert t.cases\n", []),
        ("def test_a():\n    case = TestTable('test_more')\n    case.run(None)\n", []),
        ("def test_a():\n    t = TestTable()\n    t.cases = []\n", []),  # the instance's own attribute
        ("class _K(TestTable):\n    cases = []\n\n\n_K.cases.pop()\n", []),
        ("class _K(TestTable):\n    cases = []\n\n\ndef test_a():\n    t = _K()\n    t.cases.pop()\n", []),
        ("import unittest\n\nSUITE = unittest.TestSuite([TestTable('test_a')])\n", []),
        # called, subclassed, read through its attributes, handed to a library, annotated
        ("def test_a(x):\n    assert isinstance(x, (TestTable, int))\n", []),
        ("def test_a():\n    TestTable().test_more()\n", []),
        ("class TestNew(TestTable):\n    pass\n", []),
        ("import unittest\nunittest.TestLoader().loadTestsFromTestCase(TestTable)\n", []),
        ("x: TestTable = None\n", []),
        ("def test_a():\n    assert TestTable.cases == [(5, 10)]\n", []),
    ],
)
def test_an_existing_class_held_where_the_check_cannot_follow_it(source: str, found: list[tuple[int, str]]) -> None:
    """An alias of an existing test class (``K = TestTable``; in a list looped over, a default,
    a function's value) reaches its data as the class does -- ``K.cases.pop()`` trimmed the
    cases and was CERTIFIED. Held so, the class is a finding, named so it can be declared."""
    tree = ast.parse(source)
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert _found(source, added=frozenset(pyscan.bindings(tree.body)) | defined) == found
    # a class holding no data is a value like any other (click's tests: a class as a flag's value)
    plain = datause.module_data(ast.parse(BASELINE.replace("TestTable", "Plain").replace("cases = [(5, 10)]", "pass")))
    assert _found(source.replace("TestTable", "Plain"), baseline=plain) == []


#: A baseline beside ``BASELINE``'s: a helper class of the tests with data of its own.
HELPERS = datause.module_data(ast.parse(BASELINE + "\n\nclass Money:\n    units = {'EUR': 100}\n"))


@pytest.mark.parametrize(
    "source",
    [
        # a helper class, not a test class, handed around as tests do (a review's probes)
        "import pytest\n\n@pytest.mark.parametrize('kind', [int, Money])\ndef test_kind(kind):\n    assert kind\n",
        "import pytest\n\n@pytest.fixture\ndef kind():\n    return Money\n",
        "KINDS = {'money': Money}\n",
        # a patcher of another test module's name, undone where its test ends
        "from unittest import mock\n\nclass TestNew:\n    def setUp(self):\n"
        "        p = mock.patch('test_tables.double', wraps=len)\n        self.spy = p.start()\n"
        "        self.addCleanup(p.stop)\n",
        "from unittest import mock\n\nclass TestNew:\n    def setUp(self):\n"
        "        self.patcher = mock.patch('test_tables.CASES', [])\n        self.patcher.start()\n\n"
        "    def tearDown(self):\n        self.patcher.stop()\n",
        "from unittest import mock\n\nclass TestNew:\n    def setUp(self):\n"
        "        mock.patch('test_tables.CASES', []).start()\n        self.addCleanup(mock.patch.stopall)\n",
        "from unittest import mock\n\nEMPTY = mock.patch('test_tables.CASES', [])\n\n\n"
        "@EMPTY\ndef test_x():\n    pass\n",
        "import pytest\nfrom unittest import mock\n\n@pytest.fixture\ndef empty():\n"
        "    p = mock.patch('test_tables.CASES', [])\n    p.start()\n    yield\n    p.stop()\n",
    ],
)
def test_what_an_honest_test_does_with_helpers_and_patchers_is_no_finding(source: str) -> None:
    tree = ast.parse(source)
    data = (
        HELPERS
        | datause.imported_data(tree, {"test_tables": DATA})
        | datause.Data(added=frozenset(pyscan.bindings(tree.body)))
    )
    assert list(datause.misuses(tree.body, data)) == [], source


@pytest.mark.parametrize(
    ("source", "name"),
    [
        # a patcher by another name, or made where it is used, and kept in force
        ("from unittest.mock import patch as P\nP('tests.test_tables.CASES', []).start()\n", "test_tables.CASES"),
        ("from unittest import mock\np = mock.patch\np('test_tables.CASES', []).start()\n", "test_tables.CASES"),
        ("import pytest\npytest.MonkeyPatch().setattr('test_tables.CASES', [])\n", "test_tables.CASES"),
        (
            "from unittest import mock\nmock.patch.dict(in_dict='test_tables.CASES', clear=True).start()\n",
            "test_tables.CASES",
        ),
        # another module's test class, or the module, by another name
        ("import test_tables as tt\nK = tt.TestTable\nK.cases.pop()\n", "tt.TestTable"),
        ("import tests.test_tables\nm = tests.test_tables\nm.CASES.pop()\n", "tests.test_tables"),
    ],
)
def test_a_new_test_file_reaching_another_modules_data_by_another_spelling(source: str, name: str) -> None:
    tree = ast.parse(source)
    data = datause.imported_data(tree, {"test_tables": DATA}) | datause.Data(
        added=frozenset(pyscan.bindings(tree.body))
    )
    assert [m.name for m in datause.misuses(tree.body, data)][:1] == [name], source
