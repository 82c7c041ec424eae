"""T4 and T5 selection (``runner.selection``) and its name analysis, as pure logic.

Each scenario commits B and C in a small git repository, computes the diff from git as the
runner does, and stands in for B's recorded suite run: per test, the definitions it reached
(keys ``path:first_line``, the plugin tracer's form) and the files it opened.
"""

from __future__ import annotations

import ast
import pathlib
from typing import Any

import pytest
from conftest import Repo

from pytest_evidence import gitops
from pytest_evidence.errors import GitFailed
from pytest_evidence.model import Observation, Outcome
from pytest_evidence.store import SuiteRun
from runner.config_policy import DEFAULT_PYTHON_FILES
from runner.diff import Diff, FileChange, FileKind, Span, compute, definitions
from runner.importgraph import ImportGraph
from runner.modchange import module_change
from runner.names import (
    Imported,
    binding,
    literal_names,
    local_names,
    passes_through,
    reads,
    returned_parameters,
)
from runner.selection import LEFT_OUT, Selection, select_impacted_tests


def _suite(functions: dict[str, list[str]], files: dict[str, list[str]] | None = None) -> SuiteRun:
    results = {t: Observation(t, Outcome.PASS, 0.0, None, "", (Outcome.PASS,)) for t in functions}
    return SuiteRun("r", tuple(functions), {}, 0, results, functions, files or {})


def _key(files: dict[str, str], ref: str) -> str:
    """``pkg/m.py::f`` -> ``pkg/m.py:LINE``: where the recorder would key ``f`` on B."""
    path, _, qualname = ref.partition("::")
    start = {s.qualname: s.start for s in definitions(files[path])}[qualname.partition("[")[0].replace("::", ".")]
    return "%s:%d" % (path, start)


def _complete(sel: Selection, ids: list[str]) -> None:
    """Every test has exactly one reason: why it is in T5, or why it is left out."""
    assert set(sel.reasons) | set(sel.left_out) == set(ids)
    assert not set(sel.reasons) & set(sel.left_out)
    assert set(sel.t5) == set(sel.reasons) and set(sel.t4) <= set(sel.t5)


def _select(
    repo: Repo,
    before: dict[str, str],
    after: dict[str, str],
    reached: dict[str, list[str]],
    opened: dict[str, list[str]] | None = None,
    delete: tuple[str, ...] = (),
) -> Selection:
    """Commit B and C, and select from a B run where each test reached its own function and ``reached``."""
    b = repo.commit(before)
    c = repo.commit(after, delete=delete)
    diff = compute(str(repo.path), b, c, DEFAULT_PYTHON_FILES)
    keys = {tid: [_key(before, tid), *(_key(before, ref) for ref in refs)] for tid, refs in reached.items()}
    ids = list(reached)
    sel = select_impacted_tests(ids, _suite(keys, opened), diff, ImportGraph(repo.path, [""]))
    _complete(sel, ids)
    return sel


LIMITS = {
    "pkg/__init__.py": "",
    "pkg/m.py": "LIMIT = 10\nOTHER = 1\n\n\ndef f(x):\n    return x + 1\n\n\ndef g(x):\n    return x\n",
    "pkg/n.py": (
        "from pkg import m\nfrom pkg.m import LIMIT\n\nDOUBLE = LIMIT * 2\n\n\n"
        "def capped(x):\n    return min(x, m.LIMIT)\n\n\ndef plain(x):\n    return x\n\n\n"
        "def double():\n    return DOUBLE\n"
    ),
    "tests/test_n.py": (
        "from pkg import m, n\n\n\ndef test_capped():\n    assert n.capped(50) == 10\n\n\n"
        "def test_plain():\n    assert n.plain(1) == 1\n\n\ndef test_double():\n    assert n.double() == 20\n\n\n"
        "def test_f():\n    assert m.f(1) == 2\n"
    ),
}
T = "tests/test_n.py::"


def test_a_changed_function_selects_the_tests_that_reached_it_and_no_mere_importer(repo: Repo) -> None:
    after = {"pkg/m.py": LIMITS["pkg/m.py"].replace("return x + 1", "return x + 2")}
    reached = {T + "test_f": ["pkg/m.py::f"], T + "test_plain": ["pkg/n.py::plain"]}
    sel = _select(repo, LIMITS, after, reached)
    assert sel.t4 == sel.t5 == (T + "test_f",)
    assert sel.reasons[T + "test_f"] == "reached changed function pkg/m.py::f"
    assert sel.left_out[T + "test_plain"] == LEFT_OUT  # it imports pkg.m: no longer enough


def test_a_changed_constant_selects_the_tests_that_reached_a_reader_of_it(repo: Repo) -> None:
    after = {"pkg/m.py": LIMITS["pkg/m.py"].replace("LIMIT = 10", "LIMIT = 11")}
    reached = {
        T + "test_capped": ["pkg/n.py::capped"],
        T + "test_plain": ["pkg/n.py::plain"],
        T + "test_double": ["pkg/n.py::double"],
        T + "test_f": ["pkg/m.py::f"],
    }
    sel = _select(repo, LIMITS, after, reached)
    assert sel.t4 == ()
    assert sel.t5 == (T + "test_capped", T + "test_double")
    assert sel.reasons[T + "test_capped"] == "read changed pkg/m.py::LIMIT via pkg/n.py::capped"
    # DOUBLE is bound from LIMIT at import: it changed too, and double() reads it
    assert (
        sel.reasons[T + "test_double"]
        == "read changed pkg/n.py::DOUBLE (bound from pkg/m.py::LIMIT) via pkg/n.py::double"
    )
    assert set(sel.left_out) == {T + "test_plain", T + "test_f"}


def test_coverage_keys_every_executed_line_select_the_same_way(repo: Repo) -> None:
    b = repo.commit(LIMITS)
    after = LIMITS["pkg/m.py"].replace("LIMIT = 10", "LIMIT = 11").replace("x + 1", "x + 2")
    c = repo.commit({"pkg/m.py": after})
    diff = compute(str(repo.path), b, c, DEFAULT_PYTHON_FILES)
    keys = {  # lines executed in each test: bodies, and a module-level line of a lazy import
        T + "test_capped": ["tests/test_n.py:5", "pkg/n.py:8", "pkg/n.py:4"],
        T + "test_plain": ["tests/test_n.py:9", "pkg/n.py:12"],
        T + "test_f": ["tests/test_n.py:17", "pkg/m.py:6"],
    }
    sel = select_impacted_tests(list(keys), _suite(keys), diff, ImportGraph(repo.path, [""]))
    _complete(sel, list(keys))
    assert sel.t4 == (T + "test_f",)
    assert sel.reasons == {
        T + "test_f": "reached changed function pkg/m.py::f",
        T + "test_capped": "read changed pkg/m.py::LIMIT via pkg/n.py::capped",
    }


def test_a_changed_constant_read_by_module_code_with_side_effects_makes_its_importers_run(repo: Repo) -> None:
    before = {
        **LIMITS,
        "pkg/k.py": "from pkg.m import LIMIT\n\nSETTINGS = {}\nSETTINGS['limit'] = LIMIT\n\n\ndef h():\n    return 1\n",
        "tests/test_k.py": "from pkg import k\n\n\ndef test_h():\n    assert k.h() == 1\n",
    }
    after = {"pkg/m.py": LIMITS["pkg/m.py"].replace("LIMIT = 10", "LIMIT = 11")}
    sel = _select(repo, before, after, {"tests/test_k.py::test_h": ["pkg/k.py::h"], T + "test_f": ["pkg/m.py::f"]})
    assert sel.reasons["tests/test_k.py::test_h"] == (
        "imports pkg/k.py: its module-level code (line 4) reads changed pkg/m.py::LIMIT:"
        " assigns to an attribute or an item"
    )
    assert T + "test_f" in sel.left_out


def test_a_changed_constant_at_test_module_level_selects_the_file_only_when_it_runs_code(repo: Repo) -> None:
    before = {
        **LIMITS,
        "tests/test_marked.py": (
            "import pytest\nfrom pkg.m import LIMIT\n\npytestmark = pytest.mark.skipif(LIMIT > 99, reason='big')\n\n\n"
            "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n"
        ),
        "tests/test_bound.py": (
            "from pkg.m import LIMIT\n\nEXPECTED = LIMIT\n\n\ndef test_reads():\n    assert EXPECTED == 10\n\n\n"
            "def test_not():\n    pass\n"
        ),
    }
    after = {"pkg/m.py": LIMITS["pkg/m.py"].replace("LIMIT = 10", "LIMIT = 11")}
    ids = ["tests/test_marked.py::test_one", "tests/test_marked.py::test_two"]
    sel = _select(
        repo,
        before,
        after,
        {**{t: [] for t in ids}, "tests/test_bound.py::test_reads": [], "tests/test_bound.py::test_not": []},
    )
    for tid in ids:
        assert sel.reasons[tid] == (
            "module-level code of tests/test_marked.py (line 4) reads changed pkg/m.py::LIMIT:"
            " calls pytest.mark.skipif()"
        )
    assert sel.reasons["tests/test_bound.py::test_reads"] == (
        "read changed tests/test_bound.py::EXPECTED (bound from pkg/m.py::LIMIT) via tests/test_bound.py::test_reads"
    )
    assert "tests/test_bound.py::test_not" in sel.left_out


def test_a_changed_name_is_its_modules_not_every_namesake(repo: Repo) -> None:
    before = {
        **LIMITS,
        "pkg/other.py": "from typing import List\n\nLIMIT = 5\n\n\ndef own():\n    return LIMIT\n",
        "pkg/api.py": "from pkg.m import *  # noqa\n\n\ndef api_limit():\n    return LIMIT\n",
        "pkg/compat.py": (
            "try:\n    from pkg.m import LIMIT as CAP\nexcept ImportError:\n    CAP = 0\n\n\n"
            "def cap():\n    return CAP\n"
        ),
        "tests/test_more.py": (
            "from pkg import api, compat, other\n\n\ndef test_own():\n    assert other.own() == 5\n\n\n"
            "def test_api():\n    assert api.api_limit()\n\n\ndef test_cap():\n    assert compat.cap()\n"
        ),
    }
    after = {
        "pkg/m.py": LIMITS["pkg/m.py"].replace("LIMIT = 10", "LIMIT = 11"),
        "pkg/n.py": "from typing import List\n\n" + LIMITS["pkg/n.py"],  # List is n's, not other's
    }
    reached = {
        "tests/test_more.py::test_own": ["pkg/other.py::own"],
        "tests/test_more.py::test_api": ["pkg/api.py::api_limit"],
        "tests/test_more.py::test_cap": ["pkg/compat.py::cap"],
    }
    sel = _select(repo, before, after, reached)
    assert sel.reasons == {
        "tests/test_more.py::test_api": "read changed pkg/m.py::LIMIT via pkg/api.py::api_limit",  # a star import
        "tests/test_more.py::test_cap": "read changed pkg/m.py::LIMIT via pkg/compat.py::cap",  # an import in a try
    }
    assert "tests/test_more.py::test_own" in sel.left_out


def test_an_all_list_naming_a_changed_name_changes_none_of_its_entries(repo: Repo) -> None:
    """``__all__`` holds names, not values: a version bump re-exported beside every function
    selected the whole suite (humanize's ``__all__`` lists ``"__version__"``)."""
    before = {
        **LIMITS,
        "pkg/_version.py": "__version__ = '1.0'\n",
        "pkg/__init__.py": (
            "from pkg._version import __version__\nfrom pkg.m import f, g\n\n__all__ = ['__version__', 'f', 'g']\n"
        ),
        "pkg/api.py": "from pkg import *  # noqa\n\n\ndef version():\n    return __version__\n",
        "tests/test_top.py": (
            "import pkg\nfrom pkg import api\n\n\ndef test_g():\n    assert pkg.g(1) == 1\n\n\n"
            "def test_version():\n    assert api.version()\n"
        ),
    }
    reached = {"tests/test_top.py::test_g": ["pkg/m.py::g"], "tests/test_top.py::test_version": ["pkg/api.py::version"]}
    sel = _select(repo, before, {"pkg/_version.py": "__version__ = '1.1'\n"}, reached)
    # the star import still binds the changed __version__; g, listed beside it, did not change
    assert sel.reasons == {
        "tests/test_top.py::test_version": "read changed pkg/_version.py::__version__ via pkg/api.py::version"
    }
    assert "tests/test_top.py::test_g" in sel.left_out


PLUGINS = {
    "pkg/__init__.py": "",
    "pkg/plugins.py": "REGISTRY = []\n\n\ndef register(name):\n    REGISTRY.append(name)\n\n\nregister('a')\n",
    "pkg/uses.py": "from pkg import plugins\n\n\ndef names():\n    return list(plugins.REGISTRY)\n",
    "pkg/other.py": "def one():\n    return 1\n",
    "tests/test_uses.py": "from pkg import uses\n\n\ndef test_names():\n    assert uses.names()\n",
    "tests/test_other.py": "from pkg import other\n\n\ndef test_one():\n    assert other.one() == 1\n",
}


def test_a_module_level_change_with_side_effects_falls_back_to_the_modules_importers(repo: Repo) -> None:
    after = {"pkg/plugins.py": PLUGINS["pkg/plugins.py"].replace("register('a')", "register('b')")}
    reached = {"tests/test_uses.py::test_names": ["pkg/uses.py::names"], "tests/test_other.py::test_one": []}
    sel = _select(repo, PLUGINS, after, reached)
    assert sel.reasons["tests/test_uses.py::test_names"] == (
        "imports pkg/plugins.py: calls register() (line 8 on B); calls register() (line 8 on C)"
    )
    assert "tests/test_other.py::test_one" in sel.left_out


def test_a_changed_function_run_at_import_falls_back_to_the_importers(repo: Repo) -> None:
    before = {
        **PLUGINS,
        "pkg/table.py": "def build():\n    return {'a': 1}\n\n\nTABLE = build()\n",
        "pkg/lookup.py": "from pkg.table import TABLE\n\n\ndef get(key):\n    return TABLE[key]\n",
        "tests/test_lookup.py": "from pkg import lookup\n\n\ndef test_get():\n    assert lookup.get('a') == 1\n",
    }
    after = {"pkg/table.py": before["pkg/table.py"].replace("{'a': 1}", "{'a': 2}")}
    reached = {"tests/test_lookup.py::test_get": ["pkg/lookup.py::get"], "tests/test_other.py::test_one": []}
    sel = _select(repo, before, after, reached)  # build() ran at import, outside every test's record
    assert sel.t4 == ()
    assert sel.reasons["tests/test_lookup.py::test_get"] == (
        "imports pkg/table.py: its module-level code (line 5) calls pkg/table.py::build, which may run changed code:"
        " calls build()"
    )
    assert "tests/test_other.py::test_one" in sel.left_out


HANDED = {
    "pkg/__init__.py": "",
    "pkg/lru.py": "class LRU:\n    def set(self, key):\n        return key\n",
    "pkg/table.py": (
        "from pkg.lru import LRU\n\n\nclass Table:\n    def __init__(self):\n        LRU().set(1)\n\n\n"
        "def fresh():\n    return Table()\n"
    ),
    "pkg/hint.py": (
        "__all__ = ('hint', 'other')\n\n\n"  # lists the names, binding none of them
        "def hint(base, strict=None):\n    if strict is None:\n        return base\n    return object\n\n\n"
        "def other(base):\n    return base if base else Meta\n"
    ),
    "pkg/db.py": (
        "from typing import Type\n\nfrom pkg.hint import hint\nfrom pkg.table import Table, fresh\n\n"
        "from pkg.hint import other\n\n"
        "Base: Type[Table] = hint(hint(Table))\n\n\nclass DB(Table):\n    pass\n\n\ndef size():\n    return 0\n"
    ),
    "tests/test_db.py": "from pkg import db\n\n\ndef test_size():\n    assert db.size() == 0\n",
}


def _lru_changed(repo: Repo, before: dict[str, str]) -> Selection:
    """The selection when ``LRU.set`` changes under ``before`` (``HANDED`` with a variation),
    ``test_size`` having reached only ``db.size`` on B."""
    after = {"pkg/lru.py": HANDED["pkg/lru.py"].replace("return key", "return key + 1")}
    return _select(repo, before, after, {"tests/test_db.py::test_size": ["pkg/db.py::size"]})


@pytest.mark.parametrize(
    ("line", "runs"),
    [
        ("Base: Type[Table] = hint(hint(Table))", False),  # handed on: a pass-through, an index, a plain base
        ("Base = hint(Table)\n\n\nclass Sub(Base):\n    pass", False),  # a base hint() gives: Table or object
        ("Base = hint(Table, fresh)\n\n\nclass Sub(Base):\n    pass", True),  # given a function too
        ("Base = hint(Table)\nBase = fresh\n\n\nclass Sub(Base):\n    pass", True),  # bound twice
        ("Base = other(Table)\n\n\nclass Sub(Base):\n    pass", True),  # other() may return any class
        ("Base = fresh()", True),  # calls a function that may run changed code
        ("Base = hint(Table)()", True),  # calls what the pass-through returned
        ("Base = hint(fresh)\nBase()", True),  # the bound name, called later at import
        ("Alias = Table\nMADE = Alias()", True),  # an alias, called later at import
        ("Alias = fresh\nMADE = [Alias()]", True),
        ("Alias = Table\nNAMES = {Alias: 1}", False),  # held (a class hashes as type does)
        ("Alias: Type[Table] = Table", False),
        ('if __name__ == "__main__":\n    fresh()', False),  # never runs on import
        ('if "__main__" == __name__:\n    fresh()', False),
        ('if __name__ != "__main__":\n    fresh()', True),
        ('if __name__ == "__main__":\n    pass\nelse:\n    fresh()', True),  # the else runs on import
        # a third review's probes: a class body's values go to whatever makes the class
        ("Base = hint(base=Table)", False),  # by keyword, at module level: handed on
        ("class Holder:\n    Base = hint(base=Table)", True),  # a metaclass may be given it
        ("backend: Table = None", False),  # the module's annotation: held
        ("backend: Table\nMADE = [k() for k in __annotations__.values()]", True),  # called through them
        ("backend: Table\nMADE = list(__annotations__)", True),  # what reads them may call
        # a fourth review's probes: a decorator reads the new class's attributes (a descriptor
        # of the base runs on ``getattr``)
        ("import dataclasses\n\n\n@dataclasses.dataclass\nclass Sub(Table):\n    pass", True),
        ("import functools\n\n\n@functools.total_ordering\nclass Sub(Table):\n    pass", True),
        ("class Holder:\n    backend: Table = None", True),  # a base's __init_subclass__ may read it
    ],
)
def test_module_code_that_only_hands_a_tainted_class_on_runs_none_of_it(repo: Repo, line: str, runs: bool) -> None:
    """tinydb: ``TableBase = with_typehint(Table)`` at import made every importer of
    ``database.py`` run, as if ``Table()`` were called there; so did its ``class
    TinyDB(TableBase)``, though ``with_typehint`` returns its argument or ``object``. A base bound
    otherwise may bring any metaclass."""
    before = {**HANDED, "pkg/db.py": HANDED["pkg/db.py"].replace("Base: Type[Table] = hint(hint(Table))", line)}
    sel = _lru_changed(repo, before)
    assert ("tests/test_db.py::test_size" in sel.reasons) is runs
    if runs:
        assert sel.reasons["tests/test_db.py::test_size"].startswith("imports pkg/db.py: its module-level code")


NAMED = (
    "\n\nclass Named:\n    def __init__(self, f=None):\n        self.f = f\n\n"
    "    def __set_name__(self, owner, name):\n        self.made = owner()\n"
)


@pytest.mark.parametrize(
    ("extra", "body"),
    [
        ("", "    pass\n"),
        ("", "    def size(self):\n        return 1\n\n    length = size\n"),
        ("", '    """DB."""\n\n    LIMITS = (1, -2, "x")\n'),
        ("", "    class Link:\n        __slots__ = ()\n"),  # cachetools' LFUCache._Link
        ("", "    @functools.total_ordering\n    class Item:\n        pass\n"),  # cachetools' TLRUCache._Item
        ("", "    @property\n    def size(self):\n        return 1\n"),
        ("", "    d = Named()\n"),  # Named's __set_name__ is given DB, and DB() runs Table.__init__
        # a fourth review's probes: ``property`` rebound where no check of the body looked
        ("for property in (Named,):\n    pass\n", "    @property\n    def size(self):\n        return 1\n"),
        ("(property := Named)\n", "    @property\n    def size(self):\n        return 1\n"),
        ("globals()['property'] = Named\n", "    @property\n    def size(self):\n        return 1\n"),
        (
            "import builtins\n\nbuiltins.__dict__['property'] = Named\n",
            "    @property\n    def x(self):\n        return 1\n",
        ),
        # a value planted in the namespace being built, by calls in a target or an annotation
        ("def plant():\n    sys._getframe(1).f_locals['d'] = Named()\n", "    slot: plant()\n"),
        (
            "def plant():\n    sys._getframe(1).f_locals['d'] = Named()\n",
            "    def size(self, a=plant()):\n        return a\n",
        ),
    ],
)
def test_no_subclass_statement_hands_its_base_on_while_the_project_names_set_name(
    repo: Repo, extra: str, body: str
) -> None:
    """A value of the new class's body whose ``__set_name__`` is given the class may call it:
    ``owner()`` runs its tainted base (a reviewer's probe). A check that the body held only
    methods and constants was taken back: a fourth review found 18 ways past it (``property``
    rebound by ``for``, ``:=``, ``globals()``, ``builtins.__dict__``, from another module; a value
    planted by a call in an annotation or a default). The control: the same statement hands its
    base on while no file names the hook (``test_module_code_that_only_hands_...``)."""
    before = {
        **HANDED,
        "pkg/table.py": HANDED["pkg/table.py"] + NAMED,
        "pkg/db.py": "import functools\nimport sys\n"
        + HANDED["pkg/db.py"]
        .replace("from pkg.table import Table, fresh", "from pkg.table import Named, Table, fresh\n\n" + extra)
        .replace("class DB(Table):\n    pass\n", "class DB(Table):\n" + body),
    }
    sel = _lru_changed(repo, before)
    assert sel.reasons["tests/test_db.py::test_size"].startswith("imports pkg/db.py: its module-level code")


LAZY = (
    "\n\nclass Lazy:\n    __isabstractmethod__ = True\n\n    def __get__(self, obj, owner):\n"
    "        if obj is None and owner.__name__ != 'Table':\n            owner.made = owner()\n        return self\n"
)


@pytest.mark.parametrize(
    ("header", "runs"),
    [
        ("class Table:", False),
        ("class Table(dict):", False),  # made by type, which calls nothing of a class's
        ("class Table(typing.Generic[T]):", False),  # Generic reads the new class's bases only
        # a fourth review's probe: ABCMeta gets each name a base left abstract from the new
        # class, and a descriptor's __get__ runs
        ("class Table(abc.ABC):\n    run = Lazy()\n", True),
        ("class Table(collections.abc.Sized):", True),  # cachetools' Cache: a MutableMapping
    ],
)
def test_a_tainted_base_is_handed_on_only_through_an_ancestry_that_reads_nothing(
    repo: Repo, header: str, runs: bool
) -> None:
    """``class DB(Table)`` hands ``Table`` on while making the class runs nothing of it: not so
    under ``ABCMeta``, which reads the new class's attributes."""
    head = "import abc\nimport collections.abc\nimport typing\n\nT = typing.TypeVar('T')\n"
    table = HANDED["pkg/table.py"].replace("class Table:", header)
    before = {**HANDED, "pkg/table.py": head + table + LAZY}
    sel = _lru_changed(repo, before)
    assert ("tests/test_db.py::test_size" in sel.reasons) is runs


@pytest.mark.parametrize(
    ("header", "runs"),
    [
        ("class Table:", False),
        ("class Table(abc.ABC):", False),  # ABCMeta reads attributes, calls no method
        ("class Table(collections.abc.Sized):", False),  # tinydb's LRUCache: a MutableMapping
        ("class Table(enum.Enum):", True),  # EnumMeta calls __init__ per member
    ],
)
def test_a_class_whose_maker_calls_none_of_its_methods_keeps_a_changed_dunder_to_its_callers(
    repo: Repo, header: str, runs: bool
) -> None:
    """A tainted ``__init__`` runs where the class is called -- or where its metaclass calls it
    while making it: then the module falls back. ``abc``'s metaclasses are not among those, though
    they may not hand a base on (above)."""
    head = "import abc\nimport collections.abc\nimport enum\n"
    before = {
        **HANDED,
        "pkg/table.py": head + HANDED["pkg/table.py"].replace("class Table:", header),
        "tests/test_t.py": "from pkg import table\n\n\ndef test_t():\n    assert table.fresh\n",
    }
    after = {"pkg/lru.py": HANDED["pkg/lru.py"].replace("return key", "return key + 1")}
    sel = _select(
        repo, before, after, {"tests/test_db.py::test_size": ["pkg/db.py::size"], "tests/test_t.py::test_t": []}
    )
    assert ("tests/test_t.py::test_t" in sel.reasons) is runs


LAMBDAS = (
    "import pytest\n\nfrom pkg.table import fresh\n\n\ndef keep(f):\n    return f\n\n\n"
    "LINES\n\n\ndef test_case():\n    assert fresh() is not None\n\n\n"
    "def test_other():\n    assert fresh is not None\n"
)


@pytest.mark.parametrize(
    ("lines", "runs"),
    [
        # held, a lambda may still be called unseen: an Enum member, an attribute, a module __getattr__
        ("MAKE = lambda: fresh()", True),  # not judged at all before
        ("MAKERS = [keep(lambda: fresh())]", True),
        ("MAKERS = {'a': (lambda: fresh(), 1)}", True),
        ("MAKE = lambda: fresh()\nMADE = MAKE()", True),  # called at import (left out before)
        ("MAKERS = [lambda: fresh()]\nMADE = MAKERS[0]()", True),
        ("MADE = (lambda: fresh())()", True),
        ("MAKE = lambda x=fresh(): x", True),  # a default runs where the lambda stands
        # a reviewer's probes: a parametrize mark's values are read by any code that reads marks
        ('@pytest.mark.parametrize("make", [lambda: fresh()])\ndef test_p(make):\n    pass', True),
        ("class TestX:\n    make = lambda self: fresh()", True),  # a class body's: its metaclass may call it
        ("setup_module = lambda: fresh()", True),  # pytest calls it, for the first test only
        ("__getattr__ = keep(lambda name: fresh())", True),  # an import of a missing name calls it
    ],
)
def test_a_lambda_that_may_run_changed_code_is_judged_where_it_stands(repo: Repo, lines: str, runs: bool) -> None:
    """A statement binding a lambda calls nothing, and was not judged: ``MAKE = lambda: f()``,
    then ``MAKE()`` at import, ran changed code unseen. Held anywhere, a lambda may be called
    unseen (three reviews found a dozen ways), so its module falls back."""
    before = {**HANDED, "tests/test_p.py": LAMBDAS.replace("LINES", lines)}
    after = {"pkg/lru.py": HANDED["pkg/lru.py"].replace("return key", "return key + 1")}
    ran = ["pkg/table.py::fresh", "pkg/table.py::Table.__init__", "pkg/lru.py::LRU.set"]
    reached = {"tests/test_p.py::test_case": ran, "tests/test_p.py::test_other": []}
    sel = _select(repo, before, after, reached)
    assert sel.reasons["tests/test_p.py::test_case"] == "reached changed function pkg/lru.py::LRU.set"
    assert ("tests/test_p.py::test_other" in sel.reasons) is runs
    if runs:
        assert sel.reasons["tests/test_p.py::test_other"].startswith("module-level code of tests/test_p.py")


@pytest.mark.parametrize(
    "line", ["class Sub(Table, hook=fresh):\n    pass", "class Sub(Table, metaclass=Meta):\n    pass"]
)
def test_a_tainted_value_given_to_a_class_statement_by_keyword_runs_there(repo: Repo, line: str) -> None:
    """The metaclass, or ``__init_subclass__``, gets a class statement's keywords (a reviewer's
    probe: this raised inside the analysis)."""
    meta = "\n\nclass Meta(type):\n    def __new__(mcs, name, bases, ns, **kw):\n        LRU().set(3)\n"
    meta += "        return super().__new__(mcs, name, bases, ns)\n"
    before = {
        **HANDED,
        "pkg/table.py": HANDED["pkg/table.py"] + meta,
        "pkg/db.py": HANDED["pkg/db.py"].replace("Table, fresh", "Meta, Table, fresh") + "\n\n" + line + "\n",
    }
    sel = _lru_changed(repo, before)
    assert sel.reasons["tests/test_db.py::test_size"].startswith("imports pkg/db.py: its module-level code")


@pytest.mark.parametrize(
    ("line", "runs"),
    [
        ("Alias = Table[int]", True),
        ("Alias = Optional[Table[int]]", True),  # the outer index holds a subscript that runs it
        ("Alias: Optional[Table] = None", False),  # an index of a typing generic: held
    ],
)
def test_a_subscript_of_a_tainted_class_runs_its_class_getitem(repo: Repo, line: str, runs: bool) -> None:
    """``Table[int]`` at import calls ``Table.__class_getitem__`` (a review's probes: left out
    before, as a subscript calls nothing by its syntax)."""
    table = HANDED["pkg/table.py"].replace(
        "class Table:\n", "class Table:\n    def __class_getitem__(cls, item):\n        return LRU().set(item)\n\n"
    )
    db = HANDED["pkg/db.py"].replace("from typing import Type", "from typing import Optional, Type")
    db = db.replace("class DB(Table):\n    pass\n", "")  # a subclass statement runs what it may: not judged here
    before = {**HANDED, "pkg/table.py": table, "pkg/db.py": db + "\n\n" + line + "\n"}
    sel = _lru_changed(repo, before)
    assert ("tests/test_db.py::test_size" in sel.reasons) is runs


def test_a_tainted_class_creation_hook_makes_a_subclass_statement_run_it(repo: Repo) -> None:
    before = {
        **HANDED,
        "pkg/table.py": HANDED["pkg/table.py"].replace(
            "class Table:\n", "class Table:\n    def __init_subclass__(cls):\n        LRU().set(2)\n\n"
        ),
    }
    sel = _lru_changed(repo, before)
    assert sel.reasons["tests/test_db.py::test_size"].startswith("imports pkg/db.py: its module-level code (line 11)")


@pytest.mark.parametrize(
    ("hook", "runs"),
    [
        ("# a metaclass would do it here", False),  # a comment names nothing
        ('"""Not with a metaclass."""', False),  # nor a docstring
        ('setattr(Table, "__init_subclass__", classmethod(print))', True),
        ("class Meta(type):\n    pass\n\n\nclass Other(metaclass=Meta):\n    pass", True),
        ("class Hooked:\n    def __mro_entries__(self, bases):\n        return (object,)", True),
        # __set_name__ is given the new class by a value of its body, whatever that body looks
        # like (a fourth review found 18 ways past a check of the body): cachetools' and boltons'
        # descriptors keep their subclasses' bases held
        ("class Desc:\n    def __set_name__(self, owner, name):\n        self.name = name", True),
        # a subclass handed on may be subscripted elsewhere, running the base's (a reviewer's probe)
        ("class Generic:\n    def __class_getitem__(cls, item):\n        return cls", True),
    ],
)
def test_a_class_creation_hook_is_one_the_code_names(repo: Repo, hook: str, runs: bool) -> None:
    """tinydb's ``storages.py`` says, in a comment, that ``ABCMeta`` is used as a metaclass:
    no class statement of the project could hand its base on."""
    before = {**HANDED, "pkg/hint.py": HANDED["pkg/hint.py"] + "\n\n" + hook + "\n"}
    sel = _lru_changed(repo, before)
    assert ("tests/test_db.py::test_size" in sel.reasons) is runs


@pytest.mark.parametrize(
    ("source", "returned"),
    [
        ("def f(base):\n    if CHECKING:\n        return base\n    return object\n", {"base"}),
        ("def f(a, b):\n    def g():\n        return dict\n    return b\n", {"b"}),  # g's return is its own
        ("def f(base=None):\n    return base\n", None),  # it may return the default
        ("def f(*bases):\n    return bases\n", None),
        ("def f(base):\n    return dict\n", None),
        ("def f(base):\n    return base()\n", None),
        ("def f(base):\n    yield base\n", None),
        ("async def f(base):\n    return base\n", None),
    ],
)
def test_the_parameters_a_function_returns(source: str, returned: set[str] | None) -> None:
    node = ast.parse(source).body[0]
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    found = returned_parameters(node)
    assert (set(found) if found is not None else None) == returned


def test_a_subclass_of_a_changed_tainted_class_is_changed_not_run_at_import(repo: Repo) -> None:
    """cachetools: ``class TTLCache(_TimedCache)`` at import, ``_TimedCache`` changed in its body
    and tainted through its methods, made every importer of the package run (155 of 454)."""
    before = {
        **HANDED,
        "pkg/table.py": HANDED["pkg/table.py"].replace("class Table:\n", "class Table:\n    LIMIT = 1\n\n"),
        "pkg/db.py": "from pkg.table import Table\n\n\nclass DB(Table):\n    pass\n\n\ndef size():\n    return 0\n",
        "pkg/use.py": "from pkg.db import DB\n\n\ndef limit():\n    return DB.LIMIT\n",
        "tests/test_use.py": "from pkg import use\n\n\ndef test_limit():\n    assert use.limit()\n",
    }
    after = {
        "pkg/table.py": before["pkg/table.py"].replace("LIMIT = 1", "LIMIT = 2"),
        "pkg/lru.py": HANDED["pkg/lru.py"].replace("return key", "return key + 1"),
    }
    reached = {
        "tests/test_db.py::test_size": ["pkg/db.py::size"],
        "tests/test_use.py::test_limit": ["pkg/use.py::limit"],
    }
    sel = _select(repo, before, after, reached)
    assert "tests/test_db.py::test_size" in sel.left_out
    assert sel.reasons["tests/test_use.py::test_limit"].startswith("read changed pkg/")  # DB.LIMIT, by name


def test_added_and_deleted_modules_fall_back_to_their_importers(repo: Repo) -> None:
    before = {
        **PLUGINS,
        "pkg/old.py": "def gone():\n    return 0\n",
        "tests/test_old.py": "from pkg.old import gone\n\n\ndef test_gone():\n    assert gone() == 0\n",
    }
    after = {
        "pkg/new.py": "def fresh():\n    return 2\n",
        "pkg/uses.py": "from pkg import new, plugins\n\n\ndef names():\n    return list(plugins.REGISTRY)\n",
    }
    reached = {
        "tests/test_old.py::test_gone": [],
        "tests/test_uses.py::test_names": ["pkg/uses.py::names"],
        "tests/test_other.py::test_one": ["pkg/other.py::one"],
    }
    sel = _select(repo, before, after, reached, delete=("pkg/old.py",))
    assert sel.reasons["tests/test_old.py::test_gone"] == "imports pkg/old.py: a deleted module"
    assert sel.reasons["tests/test_uses.py::test_names"] == "imports pkg/new.py: a new module"
    assert "tests/test_other.py::test_one" in sel.left_out


def test_a_changed_data_file_selects_the_tests_that_opened_it(repo: Repo) -> None:
    before = {**PLUGINS, "pkg/table.csv": "a,1\n", "pkg/unused.json": "{}\n"}
    after = {"pkg/table.csv": "a,2\n", "pkg/unused.json": "[]\n"}
    reached: dict[str, list[str]] = {"tests/test_uses.py::test_names": [], "tests/test_other.py::test_one": []}
    sel = _select(repo, before, after, reached, opened={"tests/test_uses.py::test_names": ["pkg/table.csv"]})
    assert sel.reasons == {"tests/test_uses.py::test_names": "opened changed file pkg/table.csv on B"}
    assert set(sel.left_out) == {"tests/test_other.py::test_one"}  # nobody opened unused.json: T7 judges it


@pytest.mark.parametrize(
    ("path", "text"),
    [("tests/conftest.py", "X = 1\n"), ("pyproject.toml", "[tool.pytest.ini_options]\n"), ("requirements.txt", "a\n")],
)
def test_configuration_conftest_and_manifest_changes_select_the_whole_suite(repo: Repo, path: str, text: str) -> None:
    reached = {"tests/test_uses.py::test_names": [], "tests/test_other.py::test_one": ["pkg/other.py::one"]}
    sel = _select(repo, {**PLUGINS, path: ""}, {path: text}, reached)
    assert sel.whole_suite and sel.left_out == {}
    assert set(sel.reasons.values()) == {"pytest configuration, a conftest or a manifest changed"}


def test_tests_without_baseline_or_dependency_data_are_selected(repo: Repo) -> None:
    b = repo.commit(PLUGINS)
    c = repo.commit({"tests/test_other.py": PLUGINS["tests/test_other.py"] + "\n\ndef test_two():\n    pass\n"})
    diff = compute(str(repo.path), b, c, DEFAULT_PYTHON_FILES)
    suite = _suite({"tests/test_uses.py::test_names": ["tests/test_uses.py:4"], "tests/test_other.py::test_one": []})
    suite = SuiteRun(
        "r", suite.collected, {}, 0, {**suite.results, "tests/test_uses.py::test_x": None}, suite.functions, {}
    )
    ids = ["tests/test_uses.py::test_names", "tests/test_other.py::test_one", "tests/test_other.py::test_two"]
    unknown = ["tests/test_uses.py::test_x", "tests/test_uses.py::test_y"]
    sel = select_impacted_tests([*ids, *unknown], suite, diff, ImportGraph(repo.path, [""]))
    _complete(sel, [*ids, *unknown])
    assert "tests/test_other.py::test_one" in sel.left_out  # its file gained a test; its own code is as it was
    assert sel.reasons == {
        "tests/test_other.py::test_two": "no baseline data for this test (new, or collected on C only)",
        "tests/test_uses.py::test_x": "no baseline data for this test (new, or collected on C only)",
        "tests/test_uses.py::test_y": "no baseline data for this test (new, or collected on C only)",
    }
    no_deps = SuiteRun("r", suite.collected, {}, 0, suite.results, {}, {})
    sel = select_impacted_tests(ids[:1], no_deps, diff, ImportGraph(repo.path, [""]))
    assert sel.reasons == {ids[0]: "no dependency data for this test (recorded under another tracer?)"}


TESTS = {
    "pkg/__init__.py": "",
    "pkg/m.py": "def f(x):\n    return x + 1\n",
    "tests/test_t.py": (
        "import pytest\n\nfrom pkg import m\n\nLIMIT = 3\n\n\ndef helper():\n    return LIMIT\n\n\n"
        "@pytest.fixture\ndef box():\n    return [1]\n\n\ndef test_a(box):\n    assert helper() == 3\n\n\n"
        "def test_b():\n    assert m.f(1) == 2\n\n\nclass TestC:\n    size = 1\n\n"
        "    def test_c(self):\n        assert self.size == 1\n"
    ),
}


@pytest.mark.parametrize(
    ("old", "new", "selected"),
    [
        ("LIMIT = 3\n", "LIMIT = 3\n\n# a comment\n", set()),
        # a new test inserted before a class leaves the class as it was (the lines around a
        # pure insertion stand for it only where it is no whole new definition)
        ("\n\nclass TestC", "\n\ndef test_d():\n    pass\n\n\nclass TestC", set()),
        ("\n\nclass TestC", "\n\nX = 1\n\n\nclass TestC", {"test_c"}),
        ("LIMIT = 3", "LIMIT = 4", {"test_a"}),  # read through helper()
        ("return LIMIT", "return LIMIT + 0", {"test_a"}),  # a helper it reached
        ("return [1]", "return [2]", {"test_a"}),  # a fixture it requested
        ("def test_b():", "@pytest.mark.skip\ndef test_b():", {"test_b"}),  # its own header
        ("m.f(1) == 2", "m.f(2) == 3", {"test_b"}),
        ("size = 1", "size = 2", {"test_c"}),  # its class's body
        ("LIMIT = 3", "LIMIT = 3\npytestmark = pytest.mark.skip", {"test_a", "test_b", "test_c"}),
        ("LIMIT = 3", "LIMIT = 3\npytest.importorskip('os')", {"test_a", "test_b", "test_c"}),  # a call
        ("@pytest.fixture\ndef box", "@pytest.fixture(autouse=True)\ndef box", {"test_a", "test_b", "test_c"}),
        (
            "\n\ndef test_a",
            "\n\n@pytest.fixture(autouse=True)\ndef auto():\n    pass\n\n\ndef test_a",
            {"test_a", "test_b", "test_c"},
        ),
        ("\n\ndef test_a", "\n\ndef setup_function():\n    pass\n\n\ndef test_a", {"test_a", "test_b", "test_c"}),
        (
            "\n\ndef test_a",
            "\n\ndef pytest_generate_tests(metafunc):\n    pass\n\n\ndef test_a",
            {"test_a", "test_b", "test_c"},
        ),
        # the module's every test, though only the class's would need to
        (
            "    size = 1\n",
            "    size = 1\n\n    def setup_method(self):\n        pass\n",
            {"test_a", "test_b", "test_c"},
        ),
    ],
)
def test_a_changed_test_module_is_read_as_code(repo: Repo, old: str, new: str, selected: set[str]) -> None:
    """toolz, tabulate: every test of a test module that gained a test, or blank lines, ran in
    T5 (toolz: 130 of 193). What pytest applies to tests unnamed -- a fixture, a setup or
    teardown function, a hook, ``pytestmark`` -- still makes every test of the module run."""
    assert TESTS["tests/test_t.py"].count(old) == 1
    after = {"tests/test_t.py": TESTS["tests/test_t.py"].replace(old, new)}
    reached = {
        "tests/test_t.py::test_a": ["tests/test_t.py::helper", "tests/test_t.py::box"],
        "tests/test_t.py::test_b": ["pkg/m.py::f"],
        "tests/test_t.py::TestC::test_c": [],
    }
    sel = _select(repo, TESTS, after, reached)
    assert {t.rpartition("::")[2] for t in sel.reasons} == selected


BOX = {
    "pkg/__init__.py": "",
    "pkg/box.py": (
        "class Box:\n    size = 3\n\n    def grow(self):\n        return self.size + 1\n\n"
        "    def other(self):\n        return 0\n\n\ndef outer():\n    @staticmethod\n    def inner():\n"
        "        return 1\n\n    return inner\n\n\ndef untouched():\n    return 2\n"
    ),
    "tests/test_box.py": (
        "from pkg.box import Box, outer, untouched\n\n\ndef test_other():\n    assert Box().other() == 0\n\n\n"
        "def test_outer():\n    assert outer()\n\n\ndef test_untouched():\n    assert untouched() == 2\n"
    ),
}


def test_a_class_body_change_selects_tests_that_reached_any_of_its_methods(repo: Repo) -> None:
    after = {"pkg/box.py": BOX["pkg/box.py"].replace("size = 3", "size = 4")}
    reached = {"tests/test_box.py::test_other": ["pkg/box.py::Box::other"], "tests/test_box.py::test_untouched": []}
    sel = _select(repo, BOX, after, reached)
    assert sel.t4 == ("tests/test_box.py::test_other",)
    assert sel.reasons["tests/test_box.py::test_other"] == "reached changed function pkg/box.py::Box"


def test_an_existing_methods_header_selects_its_callers_and_readers_not_every_user_of_its_class(repo: Repo) -> None:
    """semver's ``_nat_cmp`` gained annotations: every test naming ``Version`` ran, not only
    those that reached the method."""
    after = {"pkg/box.py": BOX["pkg/box.py"].replace("def grow(self):", "def grow(self) -> int:")}
    before = {**BOX, "pkg/use.py": "def grower(box):\n    return box.grow\n"}
    reached = {
        "tests/test_box.py::test_other": ["pkg/box.py::Box::other"],
        "tests/test_box.py::test_outer": ["pkg/box.py::Box::grow"],  # stands in for a caller of grow
        "tests/test_box.py::test_untouched": ["pkg/use.py::grower"],  # reads grow without calling it
    }
    sel = _select(repo, before, after, reached)
    assert sel.reasons == {
        "tests/test_box.py::test_outer": "reached changed function pkg/box.py::Box.grow",
        "tests/test_box.py::test_untouched": "read changed pkg/box.py::grow via pkg/use.py::grower",
    }
    assert "tests/test_box.py::test_other" in sel.left_out  # it built a Box, never touched grow


def test_a_nested_definitions_header_is_run_by_the_function_around_it(repo: Repo) -> None:
    after = {"pkg/box.py": BOX["pkg/box.py"].replace("    @staticmethod\n", "    @classmethod\n")}
    reached = {"tests/test_box.py::test_outer": ["pkg/box.py::outer"], "tests/test_box.py::test_untouched": []}
    sel = _select(repo, BOX, after, reached)  # outer() never called inner(): its own run changed
    assert sel.t4 == ("tests/test_box.py::test_outer",)
    assert sel.reasons["tests/test_box.py::test_outer"] == "reached changed function pkg/box.py::outer"


def test_a_pytest_hook_that_may_run_changed_code_selects_every_test(repo: Repo) -> None:
    before = {
        **PLUGINS,
        "pkg/plugin.py": (
            "from pkg.other import one\n\n\ndef pytest_collection_modifyitems(items):\n    one()\n\n\n"
            "def pytest_settings():\n    return one()\n"
        ),
    }
    reached: dict[str, list[str]] = {"tests/test_uses.py::test_names": [], "tests/test_other.py::test_one": []}
    sel = _select(repo, before, {"pkg/other.py": "def one():\n    return 2\n"}, reached)
    why = "pytest hook pkg/plugin.py::pytest_collection_modifyitems runs for every test it applies to"
    assert set(sel.reasons.values()) == {why + " and may run changed pkg/other.py::one"}  # pytest_settings is none


FIXTURES = {
    "pkg/__init__.py": "",
    "pkg/storage.py": "def make_db():\n    return {'rows': 1}\n",
    "tests/conftest.py": (
        "import pytest\n\nfrom pkg.storage import make_db\n\n\n@pytest.fixture(scope='session')\ndef db():\n"
        "    return make_db()\n"
    ),
    "tests/test_db.py": (
        "def test_first(db):\n    assert db\n\n\ndef test_later(db):\n    assert db['rows'] == 1\n\n\n"
        "def test_plain():\n    pass\n"
    ),
    "tests/sub/conftest.py": (
        "import pytest\n\nfrom pkg.storage import make_db\n\n\n@pytest.fixture(scope='module', autouse=True)\n"
        "def prepared():\n    make_db()\n"
    ),
    "tests/sub/test_sub.py": "def test_in_sub():\n    pass\n",
}


def test_a_fixture_set_up_once_for_many_tests_selects_every_test_that_requests_it(repo: Repo) -> None:
    after = {"pkg/storage.py": FIXTURES["pkg/storage.py"].replace("'rows': 1", "'rows': 2")}
    reached = {
        "tests/test_db.py::test_first": ["tests/conftest.py::db", "pkg/storage.py::make_db"],
        "tests/test_db.py::test_later": [],  # the session fixture ran in test_first's setup
        "tests/test_db.py::test_plain": [],
        "tests/sub/test_sub.py::test_in_sub": [],  # the autouse module fixture ran before, unrecorded
    }
    sel = _select(repo, FIXTURES, after, reached)
    assert sel.t4 == ("tests/test_db.py::test_first",)
    assert sel.reasons["tests/test_db.py::test_later"] == (
        "read changed fixture tests/conftest.py::db (session-scoped fixture that may run changed"
        " pkg/storage.py::make_db) via tests/test_db.py::test_later"
    )
    assert sel.reasons["tests/sub/test_sub.py::test_in_sub"] == (
        "module-scoped fixture tests/sub/conftest.py::prepared runs for every test it applies to"
        " and may run changed pkg/storage.py::make_db"
    )
    assert "tests/test_db.py::test_plain" in sel.left_out


def test_the_precise_tier_and_the_safe_tier_from_a_handmade_diff(tmp_path: pathlib.Path) -> None:
    """Moved from test_runner_units: a diff without B's sources (nothing to read by name)."""
    for name, text in {
        "pkg/__init__.py": "",
        "pkg/a.py": "",
        "pkg/b.py": "",
        "tests/test_a.py": "import pkg.a\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    suite = _suite(
        {
            "tests/test_a.py::t1": ["pkg/a.py:5"],
            "tests/test_a.py::t2": ["pkg/a.py:50"],
            "tests/test_b.py::t": ["pkg/b.py:1"],
            "tests/test_data.py::t": [],
        },
        {"tests/test_data.py::t": ["pkg/table.csv"]},
    )
    diff = Diff(
        (
            FileChange("pkg/a.py", "M", FileKind.SOURCE, (Span("f", 4, 8),), (Span("f", 4, 9),), False),
            FileChange("pkg/table.csv", "M", FileKind.DATA),
        )
    )
    ids = [*suite.collected, "tests/test_new.py::t"]
    sel = select_impacted_tests(ids, suite, diff, ImportGraph(tmp_path, [""]))
    _complete(sel, ids)
    assert sel.t4 == ("tests/test_a.py::t1",)
    assert sel.t5 == ("tests/test_a.py::t1", "tests/test_data.py::t", "tests/test_new.py::t")
    assert sel.reasons["tests/test_a.py::t1"] == "reached changed function pkg/a.py::f"
    assert sel.left_out["tests/test_a.py::t2"] == LEFT_OUT  # it imports pkg.a, but reached nothing changed


@pytest.mark.parametrize(
    ("source", "names", "effect"),
    [
        ("X = 1", {"X"}, ""),
        ("X: int = 1", {"X"}, ""),
        ("X += 1", {"X"}, ""),
        ("X, *Y = 1, 2", {"X", "Y"}, ""),
        ("import a.b as c", {"c"}, ""),
        ("import a.b", {"a"}, ""),
        ("from a import b as c", {"c"}, ""),
        ("from a import *", set(), "star import from a"),
        ("X = frozenset({1})", {"X"}, ""),
        ("X = compute()", {"X"}, "calls compute()"),
        ("X = '|'.join(NAMES)", {"X"}, ""),  # a method of a text literal builds a value
        ("h = lambda: register()", {"h"}, ""),
        ("obj.attr = 1", set(), "assigns to an attribute or an item"),
        ("register(1)", set(), "calls register()"),
        ("'''doc'''", {"__doc__"}, ""),
        ("__all__ = ['a', 'b']", {"__all__", "a", "b"}, ""),
        ("def f(x=1): pass", {"f"}, ""),
        ("def f(x=make()): pass", {"f"}, "calls make()"),
        ("@property\ndef f(self): pass", {"f"}, ""),
        ("@app.route('/')\ndef f(): pass", {"f"}, "decorated by @app.route"),
        ("@pytest.fixture(autouse=True)\ndef f(): pass", {"f"}, "decorated by @pytest.fixture"),
        ("class C(Base):\n    x = 1", {"C"}, ""),
        ("class C(metaclass=M): pass", {"C"}, "class C keyword metaclass="),
        ("if TYPE_CHECKING:\n    import x", {"x"}, ""),
        ("try:\n    import a\nexcept ImportError:\n    a = None", {"a"}, ""),
        ("if __name__ == '__main__':\n    main()", set(), ""),
        ("for i in range(3): pass", set(), "runs a for statement"),
        ("with open('f') as fh: pass", set(), "runs a with statement"),
    ],
)
def test_what_a_module_level_statement_binds_and_whether_it_does_more(
    source: str, names: set[str], effect: str
) -> None:
    got = binding(ast.parse(source).body[0])
    assert (set(got.names), got.effect) == (names, effect)


def test_reads_by_kind_and_parameters_as_fixture_requests() -> None:
    tree = ast.parse(
        "def f(db, x=LIMIT):\n    getattr(m, 'X')\n    mock.patch('pkg.m.Y')\n    obj.stored = Z\n"
        "    from pkg.m import W\n    return 'not a name'\n"
    )
    got = reads(tree)
    assert got.names == {"LIMIT", "getattr", "m", "mock", "obj", "Z"}  # globals of its own module
    assert got.qualified == {("mock", "patch")} and got.imported == {Imported("pkg.m", 0, "W", "W")}
    assert got.strings == {"X", "pkg", "m", "Y"}
    assert got.parameters == {"db", "x"}  # the fixtures it requests
    lazy = ast.parse("from __future__ import annotations\n\n\ndef f(x: Hint = DEFAULT) -> Out:\n    pass\n")
    assert reads(lazy.body[1], annotations=False).names == {"DEFAULT"}


def test_a_module_change_names_what_it_rebinds_and_who_runs_it() -> None:
    b = (
        "class Box:\n    size = 3\n\n    @property\n    def grow(self):\n        return 1\n\n\n"
        "def f():\n    global COUNT\n    COUNT = 1\n\n\ndef g():\n    def inner(x=1):\n        return x\n"
    )
    c = b.replace("size = 3", "size = 4").replace("@property", "@register").replace("COUNT = 1", "COUNT = 2")
    c = c.replace("x=1", "x=2")
    lines = {2, 4, 11, 15}
    change = module_change(ast.parse(b), ast.parse(c), lines, lines)
    assert change.names == {"size", "grow", "Box"}
    assert change.executors == {"Box", "f", "g"}  # not Box for grow's header: grow's own span holds it
    # an existing method's header: its name only; an added method or a dunder's header: the class's too
    box = "class Box:\n    def grow(self, by=1):\n        return by\n\n"
    box += "    def __eq__(self, other):\n        return True\n"
    header = module_change(ast.parse(box), ast.parse(box.replace("by=1", "by: int = 1")), {2}, {2})
    assert header.names == {"grow"} and not header.executors
    added = box.replace("    def __eq__", "    def shrink(self):\n        return 0\n\n    def __eq__")
    assert module_change(ast.parse(box), ast.parse(added), set(), {5, 6}).names == {"shrink", "Box"}
    dunder = box.replace("other):", "other, /):")
    assert module_change(ast.parse(box), ast.parse(dunder), {5}, {5}).names == {"__eq__", "Box"}
    assert change.side_effects == (
        "f rebinds module-level COUNT through global (on B)",
        "decorated by @register (line 4 on C)",
        "f rebinds module-level COUNT through global (on C)",
    )


@pytest.mark.parametrize(
    ("source", "through"),
    [
        ("def f(base):\n    if CHECKING:\n        return base\n    return object\n", True),
        ("def f(x=None):\n    if x is None or not x:\n        return 0\n    return x\n", True),
        ("def f(x=None, *, k=None):\n    if x is None:\n        return partial(f, k=k)\n    return x\n", True),
        ("def f(x):\n    later = partial(x)\n    return later\n", False),  # not returned as made
        ("def f(x):\n    return x()\n", False),  # calls it
        ("def f(x):\n    return g(x)\n", False),  # passes it on
        ("def f(x):\n    REGISTRY.append(x)\n", False),  # stores it
        ("def f(x):\n    return -x\n", False),  # runs its __neg__
        ("def f(x):\n    return x == 1\n", False),  # runs its __eq__
        ("def f(x):\n    @wraps(x)\n    def inner():\n        return x()\n    return inner\n", True),  # a decorator
        ("def f(x):\n    def inner():\n        return x()\n    return inner()\n", False),  # it calls the closure
    ],
)
def test_a_function_passes_through_its_parameters_only_returning_or_testing_them(source: str, through: bool) -> None:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert passes_through(node) is through


FACTORY = {
    "pkg/__init__.py": "",
    "pkg/cmp.py": (
        "from functools import wraps\n\nLIMIT = 3\n\n\ndef checked(op):\n    @wraps(op)\n    def wrapper(a, b):\n"
        "        return op(a, b)\n\n    return wrapper\n\n\nclass V:\n    @checked\n    def __eq__(self, other):\n"
        "        return True\n\n\ndef size(LIMIT=0):\n    return LIMIT\n"
    ),
    "tests/test_cmp.py": "from pkg import cmp\n\n\ndef test_size():\n    assert cmp.size() == 0\n",
}


@pytest.mark.parametrize(
    ("extra", "runs"),
    [
        ("", False),  # applying the decorator runs checked(), not the changed wrapper
        ("\nSAME = checked(max)(1, 2)\n", True),  # calls what checked() made, at import
    ],
)
def test_a_decorator_whose_closure_changed_runs_none_of_it_when_applied(repo: Repo, extra: str, runs: bool) -> None:
    """semver's ``@_comparator`` on ``Version.__eq__``: only the nested ``wrapper`` changed, yet
    applying the decorator at import made every importer of ``version.py`` run."""
    before = {**FACTORY, "pkg/cmp.py": FACTORY["pkg/cmp.py"] + extra}
    after = {"pkg/cmp.py": before["pkg/cmp.py"].replace("return op(a, b)", "return bool(op(a, b))")}
    reached = {"tests/test_cmp.py::test_size": ["pkg/cmp.py::size"]}
    sel = _select(repo, before, after, reached)
    assert ("tests/test_cmp.py::test_size" in sel.reasons) is runs


def test_a_parameter_named_like_a_changed_global_reads_no_global(repo: Repo) -> None:
    after = {"pkg/cmp.py": FACTORY["pkg/cmp.py"].replace("LIMIT = 3", "LIMIT = 4")}
    reached = {"tests/test_cmp.py::test_size": ["pkg/cmp.py::size"]}
    sel = _select(repo, FACTORY, after, reached)  # size's LIMIT is its parameter, not the module's
    assert "tests/test_cmp.py::test_size" in sel.left_out
    defaulted = {"pkg/cmp.py": FACTORY["pkg/cmp.py"].replace("def size(LIMIT=0)", "def size(LIMIT=LIMIT)")}
    again = _select(
        repo, {**FACTORY, **defaulted}, {"pkg/cmp.py": defaulted["pkg/cmp.py"].replace("= 3", "= 4")}, reached
    )
    assert "tests/test_cmp.py::test_size" in again.reasons  # its default reads the module's LIMIT
    function = ast.parse("def f(a, *b):\n    global G\n    G = c = 1\n    for d in a: pass\n").body[0]
    assert isinstance(function, ast.FunctionDef)
    assert local_names(function) == {"a", "b", "c", "d"}  # G is declared global


@pytest.mark.parametrize(
    ("line", "runs"),
    [
        ("SCOPE = {}\nSCOPE.update({'table': Table})", False),  # a dict stores it: glom's _DEFAULT_SCOPE
        ("SCOPE = []\nSCOPE.append(Table)", False),
        ("SCOPE = make()\nSCOPE.update({'table': Table})", True),  # no display: any object's update
        ("SCOPE = {}\nSCOPE.update(fresh())", True),  # the argument is a call that may run it
        ("SCOPE = {}\nSCOPE.pop(Table)", True),  # not a storing method
    ],
)
def test_a_built_in_container_storing_a_tainted_name_runs_none_of_it(repo: Repo, line: str, runs: bool) -> None:
    """boltons' ``_defaults.update(...)``: a dict's ``update`` was any tainted method named
    ``update``, and the module's importers ran (45 of 445 tests)."""
    db = "from pkg.table import Table, fresh\n\n\ndef make():\n    return {}\n\n\n%s\n\n\ndef size():\n    return 0\n"
    before = {**HANDED, "pkg/db.py": db % line}
    sel = _lru_changed(repo, before)
    assert ("tests/test_db.py::test_size" in sel.reasons) is runs


def test_names_bound_to_displays_only_are_built_in_containers() -> None:
    tree = ast.parse(
        "A = {}\nB = []\nB = [1]\nC = {}\nC = load()\nD = dict(x=1)\nE = ()\n\n\ndef f(E):\n    return E\n"
    )
    assert literal_names(list(ast.walk(tree))) == {"A", "B", "D"}  # C is rebound to a call; E is also a parameter


# What a review of the rules above found: each case was left out, and is selected now (the
# reviewer's probes, each checked to flip B -> C when run).
# P1 -- rule 3/7: a storing method of a display-bound list hands a tainted function on, but the
# statement binds no name, so the container is not tainted; module-level code later calls it.
P1_B = {
    "pkg/__init__.py": "",
    "pkg/fmt.py": (
        "def shout(s):\n    return s.upper()\n\n\n"
        "FORMATTERS = []\nFORMATTERS.append(shout)\n"
        'BANNER = " ".join(f("hi") for f in FORMATTERS)\n\n\n'
        "def banner():\n    return BANNER\n"
    ),
    "tests/test_fmt.py": 'from pkg import fmt\n\n\ndef test_banner():\n    assert fmt.banner() == "HI"\n',
}


# P2 -- rule 2: adding @abc.abstractmethod (a "pure" decorator) to an existing, non-dunder method
# makes every subclass that does not override it abstract; instantiating it now raises TypeError.
P2_B = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": (
        "import abc\n\n\nclass Shape(abc.ABC):\n    def area(self):\n        return 0\n\n"
        '    def describe(self):\n        return "shape"\n\n\n'
        'class Dot(Shape):\n    def describe(self):\n        return "dot"\n'
    ),
    "tests/test_shapes.py": (
        'from pkg import shapes\n\n\ndef test_dot():\n    assert shapes.Dot().describe() == "dot"\n'
    ),
}


# P3 -- rule 3 (class base): an Enum derived from a project Enum base whose __init__ changed:
# EnumMeta (outside the project) calls __init__ for every member while the class is created.
P3_B = {
    "pkg/__init__.py": "",
    "pkg/labels.py": (
        "import enum\n\n\nclass Labelled(enum.Enum):\n    def __init__(self, code):\n"
        "        self.label = code.upper()\n"
    ),
    "pkg/colors.py": 'from pkg.labels import Labelled\n\n\nclass Color(Labelled):\n    RED = "red"\n',
    "tests/test_colors.py": (
        'from pkg.colors import Color\n\n\ndef test_label():\n    assert Color.RED.label == "RED"\n'
    ),
}


NESTED = {
    "pkg/__init__.py": "",
    "pkg/lru.py": "def code(x):\n    return x\n",
    "pkg/colors.py": (
        "import enum\n\nfrom pkg.lru import code\n\n\ndef make():\n    class Color(enum.Enum):\n"
        '        RED = "red"\n\n        def __init__(self, value):\n            self.label = code(value)\n\n'
        "    return Color\n\n\nCALL\n"
    ),
    "tests/test_colors.py": (
        'from pkg import colors\n\n\ndef test_make():\n    assert colors.make().RED.label == "red"\n'
    ),
    "tests/test_other.py": "from pkg import colors\n\n\ndef test_other():\n    assert colors.make\n",
}


@pytest.mark.parametrize(
    ("call", "runs"),
    [
        ("LABELS = {}", True),  # make() may run at import unseen: a review found eight ways
        ("RED = make().RED", True),  # made at import: make() reads what Color.__init__ reads
        ("class Outer(make()):\n    pass", True),
        # a second review's probe: a call the analysis cannot see keeps the fallback
        ("def call(f):\n    f()\n    return f\n\n\nmake = call(make)", True),  # no longer one function
    ],
)
def test_a_class_made_in_a_function_may_be_made_at_import(repo: Repo, call: str, runs: bool) -> None:
    """boltons' test_cacheutils.py makes ``class Car(ABC)`` inside a test. Judging such a class
    made when the function runs (recorded in a test) left tests out: reviews found the function
    run at import by a decorator, a class body, ``getattr``, an alias, a protocol (``keys()``
    for ``dict()``), a base's ``__init_subclass__``, an ``Enum`` member: its module falls back."""
    before = {**NESTED, "pkg/colors.py": NESTED["pkg/colors.py"].replace("CALL", call)}
    after = {"pkg/lru.py": NESTED["pkg/lru.py"].replace("return x", "return x.upper()")}
    reached = {"tests/test_colors.py::test_make": ["pkg/colors.py::make", "pkg/lru.py::code"]}
    sel = _select(repo, before, after, {**reached, "tests/test_other.py::test_other": []})
    assert sel.reasons["tests/test_colors.py::test_make"] == "reached changed function pkg/lru.py::code"
    assert ("tests/test_other.py::test_other" in sel.reasons) is runs
    if runs:
        assert sel.reasons["tests/test_other.py::test_other"].startswith("imports pkg/colors.py: ")


HELD = (
    "import enum\n\nfrom pkg.lru import code\n\n\nclass Holder:\n    def make():\n"
    "        class Color(enum.Enum):\n            RED = 'red'\n\n            def __init__(self, value):\n"
    "                self.label = code(value)\n\n        return Color\n\n    RED = make()\n"
)


@pytest.mark.parametrize(
    "colors",
    [
        NESTED["pkg/colors.py"]  # called by its decorator, unseen
        .replace("CALL", "")
        .replace("def make():", "def call(f):\n    f()\n    return f\n\n\n@call\ndef make():"),
        NESTED["pkg/colors.py"]  # the function's own binding hides the name from its reads
        .replace("CALL", "")
        .replace(
            "            self.label = code(value)", "            global code\n            self.label = code(value)"
        ),
        HELD,  # a class body calls its own helper
    ],
)
def test_a_class_made_in_a_function_the_analysis_cannot_follow_falls_back(repo: Repo, colors: str) -> None:
    """A second review's probes: a decorator that calls the function, a ``global`` the
    function's own binding hides, a class body calling its own helper -- the class's module
    falls back as before."""
    after = {"pkg/lru.py": NESTED["pkg/lru.py"].replace("return x", "return x.upper()")}
    sel = _select(repo, {**NESTED, "pkg/colors.py": colors}, after, {"tests/test_other.py::test_other": []})
    assert sel.reasons["tests/test_other.py::test_other"].startswith("imports pkg/colors.py")


# P4 -- rule 3 (class base): an UNtainted __init_subclass__ of an ancestor instantiates each new
# subclass, running the tainted Base.__init__ at import. Only tainted hooks are looked for.
P4_B = {
    "pkg/__init__.py": "",
    "pkg/plugins.py": (
        "REGISTRY = {}\n\n\nclass Plugin:\n    def __init_subclass__(cls, **kwargs):\n"
        "        super().__init_subclass__(**kwargs)\n        REGISTRY[cls.__name__] = cls()\n\n\n"
        "class Base(Plugin):\n    def __init__(self):\n        self.level = 1\n\n\n"
        "def level(name):\n    return REGISTRY[name].level\n"
    ),
    "pkg/loud.py": "from pkg.plugins import Base\n\n\nclass Loud(Base):\n    pass\n",
    "tests/test_loud.py": (
        'import pkg.loud\nfrom pkg import plugins\n\n\ndef test_level():\n    assert plugins.level("Loud") == 1\n'
    ),
}


# P5 -- rule 3 (class base): a class decorator (a project function, untainted) instantiates the
# class it registers; the class's tainted base __init__ runs at import.
P5_B = {
    "pkg/__init__.py": "",
    "pkg/codecs.py": (
        "CODECS = {}\n\n\ndef register(cls):\n    CODECS[cls.name] = cls()\n    return cls\n\n\n"
        'class Codec:\n    name = "base"\n\n    def __init__(self):\n        self.indent = 2\n\n\n'
        "def indent(name):\n    return CODECS[name].indent\n"
    ),
    "pkg/json_codec.py": (
        'from pkg.codecs import Codec, register\n\n\n@register\nclass Json(Codec):\n    name = "json"\n'
    ),
    "tests/test_codecs.py": (
        'import pkg.json_codec\nfrom pkg import codecs\n\n\ndef test_indent():\n    assert codecs.indent("json") == 2\n'
    ),
}


# P6 -- rule 3 (pass-through callee): _function resolves a bare callee to the module-level
# definition, though a class body's own helper of that name shadows it there.
P6_B = {
    "pkg/__init__.py": "",
    "pkg/conf.py": (
        "def load():\n    return 1\n\n\ndef keep(value):\n    return value\n\n\n"
        "class Settings:\n    def keep(f):\n        return f()\n\n    value = keep(load)\n    del keep\n\n\n"
        "def current():\n    return Settings.value\n"
    ),
    "tests/test_conf.py": "from pkg import conf\n\n\ndef test_current():\n    assert conf.current() == 1\n",
}


# P7 -- rule 3 (index): a tainted name in a call-free subscript index is skipped outright, even
# when the subscripted object is project code that calls its key (a lazy cache's __missing__).
P7_B = {
    "pkg/__init__.py": "",
    "pkg/lazy.py": (
        "class Lazy(dict):\n    def __missing__(self, key):\n"
        "        value = self[key] = key()\n        return value\n\n\n"
        "CACHE = Lazy()\n\n\ndef load():\n    return 1\n\n\nVALUE = str(CACHE[load])\n\n\n"
        "def value():\n    return VALUE\n"
    ),
    "tests/test_lazy.py": 'from pkg import lazy\n\n\ndef test_value():\n    assert lazy.value() == "1"\n',
}


@pytest.mark.parametrize(
    ("before", "path", "edit", "test", "reached"),
    [
        pytest.param(
            P1_B,
            "pkg/fmt.py",
            ("return s.upper()", 'return s.upper() + "!"'),
            "tests/test_fmt.py::test_banner",
            ["pkg/fmt.py::banner"],
            id="a_filled_container_called_at_import_runs_what_it_holds",
        ),
        pytest.param(
            P2_B,
            "pkg/shapes.py",
            ("    def area", "    @abc.abstractmethod\n    def area"),
            "tests/test_shapes.py::test_dot",
            ["pkg/shapes.py::Dot.describe"],
            id="a_decorator_added_to_a_kept_method_changes_its_class",
        ),
        pytest.param(
            P3_B,
            "pkg/labels.py",
            ("code.upper()", "code.title()"),
            "tests/test_colors.py::test_label",
            [],
            id="an_enum_base_runs_its_changed_init_when_the_subclass_is_created",
        ),
        pytest.param(
            P4_B,
            "pkg/plugins.py",
            ("self.level = 1", "self.level = 2"),
            "tests/test_loud.py::test_level",
            ["pkg/plugins.py::level"],
            id="an_unchanged_init_subclass_may_run_a_changed_base",
        ),
        pytest.param(
            P5_B,
            "pkg/codecs.py",
            ("self.indent = 2", "self.indent = 4"),
            "tests/test_codecs.py::test_indent",
            ["pkg/codecs.py::indent"],
            id="a_class_decorator_may_run_a_changed_base",
        ),
        pytest.param(
            P6_B,
            "pkg/conf.py",
            ("return 1", "return 2"),
            "tests/test_conf.py::test_current",
            ["pkg/conf.py::current"],
            id="a_class_bodys_own_helper_is_not_the_module_pass_through",
        ),
        pytest.param(
            P7_B,
            "pkg/lazy.py",
            ("    return 1", "    return 2"),
            "tests/test_lazy.py::test_value",
            ["pkg/lazy.py::value"],
            id="an_index_of_a_project_mapping_may_be_called",
        ),
    ],
)
def test_what_the_review_found_is_selected(
    repo: Repo, before: dict[str, str], path: str, edit: tuple[str, str], test: str, reached: list[str]
) -> None:
    after = {path: before[path].replace(*edit)}
    sel = _select(repo, before, after, {test: reached})
    assert test in sel.t5


# A second review, of test modules read as code (each passes on B, fails on C, and was left out).
REGISTER = {"pkg/__init__.py": "", "pkg/lru.py": "REG = []\n\n\ndef register(v):\n    REG.append(v)\n"}
HELPED = {
    "tests/__init__.py": "",
    "tests/helpers.py": "import pytest\n\n\nclass Base:\n    def unused(self):\n        return 1\n",
    "tests/test_b.py": (
        "from tests.helpers import Base\n\n\nclass TestB(Base):\n    def test_b(self):\n        assert True\n"
    ),
}
SUB = "tests/test_b.py::TestB::test_b"


SECOND_REVIEW = [
    pytest.param(  # unittest calls run(), setUp() and the like by name
        HELPED,
        "tests/helpers.py",
        ("        return 1\n", "        return 1\n\n    def run(self, result=None):\n        assert False\n"),
        SUB,
        id="a_helper_base_gains_a_method_pytest_or_unittest_calls",
    ),
    pytest.param(
        HELPED,
        "tests/helpers.py",
        ("        return 1\n", "        return 1\n\n    setup_method = unused\n"),
        SUB,
        id="a_setup_bound_by_assignment",
    ),
    pytest.param(
        HELPED,
        "tests/helpers.py",
        ("class Base:", '@pytest.mark.usefixtures("checker")\nclass Base:'),
        SUB,
        id="a_mark_on_a_helper_base_class",
    ),
    pytest.param(
        {
            **HELPED,
            "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef test_data():\n    return 0\n",
            "tests/test_b.py": ("from tests.helpers import *\n\n\ndef test_b(test_data):\n    assert test_data == 0\n"),
        },
        "tests/helpers.py",
        ("class Base:", "@pytest.fixture\ndef test_data():\n    return 1\n\n\nclass Base:"),
        "tests/test_b.py::test_b",
        id="a_fixture_named_like_a_test_overrides_the_conftests",
    ),
    pytest.param(
        {
            **REGISTER,
            "pkg/config.py": "CASES = [1]\n",
            "tests/test_b.py": (
                "import pytest\n\nfrom pkg import config\n\n\n"
                '@pytest.mark.parametrize("x", config.CASES, ids=["a"])\n'
                "class TestC:\n    def test_c(self, x):\n        assert x == 1\n"
            ),
        },
        "pkg/config.py",
        ("[1]", "[2]"),
        "tests/test_b.py::TestC::test_c[a]",
        id="a_class_mark_reads_a_changed_constant",
    ),
    pytest.param(
        {
            **REGISTER,
            "pkg/registry.py": (
                "REG = {}\n\n\nclass Mark:\n    def register(self, key):\n        def put(f):\n"
                "            REG[key] = f\n            return f\n\n        return put\n\n\nmark = Mark()\n"
            ),
            "pkg/handlers.py": 'from pkg.registry import mark\n\n\n@mark.register("a")\ndef h():\n    return 1\n',
            "tests/test_h.py": (
                'import pkg.handlers\nfrom pkg.registry import REG\n\n\ndef test_h():\n    assert "a" in REG\n'
            ),
        },
        "pkg/handlers.py",
        ('"a"', '"b"'),
        "tests/test_h.py::test_h",
        id="a_decorator_named_mark_is_no_pytest_mark",
    ),
    pytest.param(
        {
            **HELPED,
            "tests/helpers.py": "import functools\n\n\n@functools.lru_cache\ndef expected():\n    return 0\n",
            "tests/test_b.py": "from tests import helpers\n\n\ndef test_b():\n    assert helpers.expected() == 0\n",
        },
        "tests/helpers.py",
        ("return 0", "return 1"),
        "tests/test_b.py::test_b",  # another test called expected() first: B's record shows it there only
        id="a_memoised_helper",
    ),
    pytest.param(
        {
            **REGISTER,
            "pkg/table.py": (
                "from pkg.lru import register\n\n\nclass Table:\n    def __init__(self):\n        register(0)\n"
            ),
            "pkg/hint.py": "import enum\n\n\ndef hint(base):\n    base = enum.Enum\n    return base\n",
            "pkg/db.py": (
                "from pkg.hint import hint\nfrom pkg.lru import register\nfrom pkg.table import Table\n\n"
                "Base = hint(Table)\n\n\nclass Sub(Base):\n    RED = 1\n\n    def __init__(self, v):\n"
                "        register(v)\n"
            ),
            "tests/test_reg.py": (
                "import pkg.db\nfrom pkg.lru import REG\n\n\ndef test_reg():\n    assert REG == [1]\n"
            ),
        },
        "pkg/lru.py",
        ("REG.append(v)", "REG.append(v + 1)"),
        "tests/test_reg.py::test_reg",
        id="a_pass_through_that_rebinds_its_parameter",
    ),
    pytest.param(
        {
            **REGISTER,
            "pkg/colors.py": (
                "import enum\n\nfrom pkg.lru import register\n\n\nclass Color(enum.Enum):\n    RED = 1\n\n"
                "    def __init__(self, v):\n        register(v)\n"
            ),
            "tests/test_c.py": (
                "import pkg.colors\nfrom pkg.lru import REG\n\n\ndef test_reg():\n    assert REG == [1]\n"
            ),
        },
        "pkg/lru.py",
        ("REG.append(v)", "REG.append(v + 1)"),
        "tests/test_c.py::test_reg",
        id="an_enum_runs_its_own_init_member_by_member",
    ),
    pytest.param(
        {
            **REGISTER,
            "pkg/table.py": (
                "from pkg.lru import register\n\n\nclass Table:\n    def __init__(self):\n        register(0)\n"
            ),
            "pkg/db.py": "from pkg.table import Table\n\n\nclass Sub(Table):\n    pass\n",
            "tests/test_db.py": ("import pkg.db\nfrom pkg.lru import REG\n\n\ndef test_reg():\n    assert REG == []\n"),
        },
        "pkg/table.py",
        (
            "        register(0)\n",
            "        register(0)\n\n    def __init_subclass__(cls, **kw):\n        register(1)\n",
        ),
        "tests/test_db.py::test_reg",
        id="an_added_init_subclass_runs_at_every_subclass_statement",
    ),
    pytest.param(
        {
            "pkg/__init__.py": "",
            "pkg/m.py": "def fix():\n    return 0\n\n\ndef helper():\n    return 0\n",
            "tests/__init__.py": "",
            "tests/sub/__init__.py": "",
            "tests/sub/test_b.py": "import pkg.m\n\n\ndef test_b():\n    assert pkg.m.helper() == 0\n",
        },
        "tests/sub/__init__.py",
        ("", "import pkg.m\n\npkg.m.helper = pkg.m.fix\n"),
        "tests/sub/test_b.py::test_b",
        id="a_test_packages_init_runs_before_its_modules",
    ),
]


STATE = {"tests/__init__.py": "", "tests/state.py": "value = {}\n", "pkg/__init__.py": "", "pkg/m.py": "X = 0\n"}
PREPARE = (
    "import pytest\n\nfrom tests import state\n\n\n@pytest.fixture(scope='module', autouse=True)\ndef prepare():\n"
    "    state.value['k'] = 1\n    yield\n\n\ndef test_a():\n    assert state.value['k'] == 1\n"
)
USES_PREPARE = (
    "from tests import state\nfrom tests.test_a import prepare\n\n\ndef test_b():\n    assert state.value['k'] == 1\n"
)
CLASS_FIXTURE = (
    "import pytest\n\nfrom tests import state\n\n\nclass TestBase:\n"
    "    @pytest.fixture(scope='class', autouse=True)\n    def prepare(self):\n        state.value['k'] = 1\n\n"
    "    def test_a(self):\n        assert state.value['k'] >= 1\n"
)
GENERATE = (
    "from pkg.m import X\n\n\ndef pytest_generate_tests(metafunc):\n    if 'n' in metafunc.fixturenames:\n"
    "        metafunc.parametrize('n', [X], ids=['a'])\n\n\ndef test_a(n):\n    assert n == 0\n"
)
MEMO = "from pkg.m import X\n\n\n@memo\ndef expected():\n    return X\n"
TWO_DEFS = (
    "from typing import TYPE_CHECKING\n\n\ndef helper():\n    return 0\n\n\nclass Registering(type):\n"
    "    def __init__(cls, name, bases, ns):\n        super().__init__(name, bases, ns)\n"
    "        for value in ns.values():\n            if isinstance(value, classmethod):\n"
    "                value.__func__(cls)\n\n\ndef hint(base):\n    return base\n\n\ndef _hinted(base):\n"
    "    return Registering('Hinted', (base,), {})\n\n\nif not TYPE_CHECKING:\n    hint = _hinted\n\n\n"
    "class Table:\n    pass\n\n\nTableBase = hint(Table)\n\n\nclass DB(TableBase):\n    @classmethod\n"
    "    def _ready_(cls):\n        cls.value = helper()\n"
)


# A third review, of the rules the second one brought.
THIRD_REVIEW = [
    pytest.param(
        {**STATE, "tests/test_a.py": PREPARE, "tests/test_b.py": USES_PREPARE},
        "tests/test_a.py",
        ("state.value['k'] = 1", "state.value['k'] = 2"),
        "tests/test_b.py::test_b",
        id="a_test_modules_autouse_fixture_imported_by_another",
    ),
    pytest.param(
        {
            **STATE,
            "tests/test_a.py": PREPARE,
            "conftest.py": "pytest_plugins = ['tests.test_a']\n",
            "tests/test_b.py": "from tests import state\n\n\ndef test_b():\n    assert state.value['k'] == 1\n",
        },
        "tests/test_a.py",
        ("state.value['k'] = 1", "state.value['k'] = 2"),
        "tests/test_b.py::test_b",
        id="a_test_module_loaded_by_pytest_plugins",
    ),
    pytest.param(
        {
            **STATE,
            "tests/test_a.py": CLASS_FIXTURE,
            "tests/test_c.py": (
                "from tests import state\nfrom tests.test_a import TestBase\n\n\nclass TestC(TestBase):\n"
                "    def test_c(self):\n        assert state.value['k'] == 1\n"
            ),
        },
        "tests/test_a.py",
        ("state.value['k'] = 1", "state.value['k'] = 2"),
        "tests/test_c.py::TestC::test_c",
        id="an_inherited_class_scoped_autouse_fixture",
    ),
    pytest.param(
        {
            **STATE,
            "tests/test_a.py": GENERATE,
            "tests/test_b.py": (
                "from tests.test_a import pytest_generate_tests\n\n\ndef test_b(n):\n    assert n == 0\n"
            ),
        },
        "pkg/m.py",
        ("X = 0", "X = 1"),
        "tests/test_b.py::test_b[a]",
        id="a_test_modules_hook_imported_by_another",
    ),
    pytest.param(
        {
            **STATE,
            "tests/helpers.py": "import functools\n\nmemo = functools.lru_cache\n\n\n"
            + MEMO.replace("@memo", "@functools.cache"),
            "tests/test_b.py": "from tests import helpers\n\n\ndef test_b():\n    assert helpers.expected() == 0\n",
        },
        "pkg/m.py",
        ("X = 0", "X = 1"),
        "tests/test_b.py::test_b",
        id="a_memoised_helper_reading_a_changed_constant",
    ),
    pytest.param(
        {
            **STATE,
            "tests/helpers.py": "from functools import lru_cache as memo\n" + MEMO,
            "tests/test_b.py": "from tests import helpers\n\n\ndef test_b():\n    assert helpers.expected() == 0\n",
        },
        "pkg/m.py",
        ("X = 0", "X = 1"),
        "tests/test_b.py::test_b",
        id="a_memoising_decorator_imported_under_another_name",
    ),
    pytest.param(
        {
            **STATE,
            "tests/helpers.py": (
                "import pytest\n\nfrom tests import state\n\n"
                "once = pytest.fixture(scope='module', autouse=True)\n\n\n"
                "@once\ndef prepare():\n    state.value['k'] = 1\n"
            ),
            "tests/test_b.py": (
                "from tests import state\nfrom tests.helpers import *\n\n\n"
                "def test_b():\n    assert state.value['k'] == 1\n"
            ),
        },
        "tests/helpers.py",
        ("state.value['k'] = 1", "state.value['k'] = 2"),
        "tests/test_b.py::test_b",
        id="a_fixture_made_by_an_alias_of_pytest_fixture",
    ),
    pytest.param(
        {
            **STATE,
            "pkg/flags.py": "ENABLED = True\n",
            "tests/test_e.py": (
                "import pytest\n\nfrom pkg import flags\n\n\n"
                "@pytest.mark.xfail('not flags.ENABLED', reason='off', strict=True)\ndef test_e():\n    pass\n"
            ),
        },
        "pkg/flags.py",
        ("True", "False"),
        "tests/test_e.py::test_e",
        id="an_xfail_condition_given_as_a_string",
    ),
    pytest.param(
        {
            **STATE,
            "tests/sub/test_b.py": "import pkg.m\n\n\ndef test_b():\n    assert pkg.m.X == 0\n",
        },
        "tests/__init__.py",
        ("", "import pkg.m\n\npkg.m.X = 1\n"),
        "tests/sub/test_b.py::test_b",
        id="a_package_init_above_a_directory_without_one",
    ),
    pytest.param(
        {
            **STATE,
            "pkg/db.py": TWO_DEFS,
            "tests/test_db.py": "from pkg.db import DB\n\n\ndef test_db():\n    pass\n",
        },
        "pkg/db.py",
        ("return 0", "return 1"),
        "tests/test_db.py::test_db",
        id="a_pass_through_rebound_at_module_level",
    ),
    pytest.param(
        {**STATE, "tests/test_x.py": "def test_x():\n    pass\n\n\ndef test_y():\n    pass\n"},
        "tests/test_x.py",
        (
            "test_y():\n    pass\n",
            "test_y():\n    pass\n\n\ndef _check():\n    assert False\n\n\ntest_x = _check\n",
        ),
        "tests/test_x.py::test_x",
        id="a_test_name_bound_anew",
    ),
]


@pytest.mark.parametrize(("before", "path", "edit", "test"), [*SECOND_REVIEW, *THIRD_REVIEW])
def test_what_the_later_reviews_found_is_selected(
    repo: Repo, before: dict[str, str], path: str, edit: tuple[str, str], test: str
) -> None:
    after = {path: before[path].replace(*edit) if edit[0] else edit[1]}
    assert after[path] != before[path]
    defined = {"%s::%s" % (f, d.qualname.replace(".", "::")) for f in before for d in definitions(before[f])}
    others: dict[str, list[str]] = {t: [] for t in OTHERS if t in defined and t != test}
    sel = _select(repo, before, after, {test: [], **others})
    assert test in sel.t5, sel.left_out


#: The suite's other tests in those cases, each reaching its own function: a test module has tests.
OTHERS = ("tests/test_a.py::test_a", "tests/test_a.py::TestBase::test_a", "tests/test_x.py::test_y")


def test_a_deleted_package_init_above_a_test_selects_it(repo: Repo) -> None:
    before = {
        **STATE,
        "tests/sub/__init__.py": "import pkg.m\n\npkg.m.X = 5\n",
        "tests/sub/test_b.py": "import pkg.m\n\n\ndef test_b():\n    assert pkg.m.X == 5\n",
    }
    sel = _select(repo, before, {}, {"tests/sub/test_b.py::test_b": []}, delete=("tests/sub/__init__.py",))
    assert "tests/sub/test_b.py::test_b" in sel.t5, sel.left_out


def test_a_diff_reads_every_file_and_patch_ahead_as_each_alone_would_say(repo: Repo) -> None:
    """``compute`` reads both sides of the changed files in one ``git cat-file --batch`` and their
    patches in one ``git diff``: the same bytes and hunks as a process per file, for names that
    are globs to git's pathspecs or quoted in its headers too (those are asked alone)."""
    # A glob to git, also quoted in its header, beside a name it matches; and a file that becomes
    # a symbolic link (two sections under one header).
    names = ["pkg/a.py", "pkg/b [1].py", "pkg/c*.py", "pkg/é.py", 'pkg/q"uote.py', 'pkg/q"[ab].py', 'pkg/q"a.py']
    # Each file's change at another line: a patch handed to the wrong file would be seen.
    (repo.path / "pkg").mkdir()
    (repo.path / "pkg" / "link.py").write_text("def f():\n    return 1\n")
    base = repo.commit(
        {n: "#\n" * i + "def f():\n    return 1\n\n\ndef g():\n    return 2\n" for i, n in enumerate(names)}
    )
    (repo.path / "pkg" / "link.py").unlink()
    (repo.path / "pkg" / "link.py").symlink_to("a.py")
    cand = repo.commit(
        {n: "#\n" * i + "def f():\n    return 10\n\n\ndef g():\n    return 2\n" for i, n in enumerate(names)}
    )
    repo.git("config", "color.ui", "always")  # no colour reaches what is parsed
    root = str(repo.path)
    patched = gitops.patches(root, base, cand, [*names, "pkg/link.py"])
    assert sorted(patched) == sorted(n for n in [*names, "pkg/link.py"] if '"' not in n)  # quoted: asked alone
    assert patched["pkg/link.py"].count("diff --git ") == 2
    for name, patch in patched.items():
        alone = repo.git("--literal-pathspecs", "diff", "--no-color", "-U0", base, cand, "--", name)
        assert [ln for ln in patch.splitlines() if ln.startswith("@@")] == [
            ln for ln in alone.splitlines() if ln.startswith("@@")
        ]
    gitops.show_ahead(root, [(side, n) for n in [*names, "pkg/none.py"] for side in (base, cand)])
    asked: list[list[str]] = []
    real = gitops.git

    def counted(args: list[str], cwd: str, check: bool = True) -> Any:
        asked.append(list(args))
        return real(args, cwd, check)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gitops, "git", counted)
        for name in names:
            assert gitops.show(root, cand, name).decode() == (repo.path / name).read_text()
        assert not asked  # every one read ahead
        with pytest.raises(GitFailed):
            gitops.show(root, base, "pkg/none.py")  # not a blob: asked, and failing, as before
    by_file = {f.path: f for f in compute(root, base, cand, DEFAULT_PYTHON_FILES).files}
    assert {p: [s.qualname for s in f.b_spans] for p, f in by_file.items()} == {
        **{n: ["f"] for n in names},
        "pkg/link.py": ["f"],
    }
    # Each file's own hunk, none of a file its name matches as a pattern.
    assert {n: sorted(by_file[n].c_lines) for n in names} == {n: [i + 2] for i, n in enumerate(names)}
