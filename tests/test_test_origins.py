"""Whether a test is new, changed or untouched since B, per definition, from the ASTs
(``overlay.OriginResolver``): the input of every role, so moved or re-commented code must stay
untouched and any change to a test's own definition -- or to the mixin it inherits it from --
must show."""

from __future__ import annotations

import pytest
from conftest import Repo

from pytest_evidence import overlay
from pytest_evidence.model import Origin

OLD = """import pytest


class Mixin:
    def test_shared(self):
        assert 1


class TestBox(Mixin):
    size = 3

    def test_kept(self):
        assert self.size

    def test_edited(self):
        assert self.size == 3

    class Inner:
        def test_deep(self):
            assert True


def make(n):
    class TestMade:
        def test_made(self):
            assert n
    return TestMade


def test_plain():
    assert make(1)
"""

#: B's file changed: the mixin's method, a class attribute and one method of the class, a method
#: added (the lines below it move), the factory's inner method.
NEW = (
    OLD.replace("        assert 1\n", "        assert 1 == 1\n")
    .replace("    size = 3\n", "    # a comment, and lines moved: nothing any test runs changed\n    size = 4\n")
    .replace("assert self.size == 3\n", "assert self.size == 4\n\n    def test_added(self):\n        assert 1\n")
    .replace("            assert n\n", "            assert n > 0\n")
)

OTHER = "from tests.test_box import Mixin\n\n\nclass TestOther(Mixin):\n    def test_own(self):\n        assert 2\n"


def _resolver(repo: Repo, reads: list[str]) -> overlay.OriginResolver:
    b = repo.commit({"tests/__init__.py": "", "tests/test_box.py": OLD, "tests/test_other.py": OTHER})
    repo.commit({"tests/test_box.py": NEW})
    plan = overlay.plan(str(repo.path), b, ("test_*.py",))

    def read(path: str) -> bytes | None:
        reads.append(path)
        return (repo.path / path).read_bytes()

    return overlay.OriginResolver(str(repo.path), plan, "", read)


def test_each_test_takes_the_origin_of_its_own_definition(repo: Repo) -> None:
    resolver = _resolver(repo, [])
    origins = {
        t: resolver.origin("tests/test_box.py::" + t)
        for t in (
            "TestBox::test_kept",
            "TestBox::test_edited",
            "TestBox::test_added",
            "TestBox::Inner::test_deep",
            "TestBox::test_shared",
            "test_plain",
            "TestMade::test_made",
            "test_plain[http://[::1]:80/]",  # a parameter id holding ``::`` (an IPv6 address)
            "TestBox::test_kept[a::b]",
        )
    }
    assert origins == {
        "TestBox::test_kept": Origin.CHANGED,  # itself did not change, but the size it reads did
        "TestBox::test_edited": Origin.CHANGED,
        "TestBox::test_added": Origin.ADDED,
        "TestBox::Inner::test_deep": Origin.UNCHANGED,  # its class changed around it, and it moved
        "TestBox::test_shared": Origin.CHANGED,  # inherited from the changed mixin
        "test_plain": Origin.UNCHANGED,
        "TestMade::test_made": Origin.CHANGED,  # a class made inside a changed factory
        "test_plain[http://[::1]:80/]": Origin.UNCHANGED,  # was ``unknown``: untyped, a false detection
        "TestBox::test_kept[a::b]": Origin.CHANGED,
    }
    # An unchanged file's test inheriting the changed mixin's method is changed too.
    assert resolver.origin("tests/test_other.py::TestOther::test_shared") is Origin.CHANGED
    assert resolver.origin("tests/test_other.py::TestOther::test_own") is Origin.UNCHANGED


def test_a_definition_changed_only_inside_an_inner_one_differs_at_every_level() -> None:
    digests = overlay._definitions(OLD.encode())
    changed = overlay._definitions(OLD.replace("assert True", "assert False").encode())
    assert digests is not None and changed is not None
    differ = {key for key in digests if digests[key] != changed[key]}
    assert differ == {("TestBox",), ("TestBox", "Inner"), ("TestBox", "Inner", "test_deep")}


def test_the_origins_are_judged_from_the_texts_read_ahead(repo: Repo) -> None:
    """T3 reads the test files before its processes run anything, and parses them while they
    collect: a test process rewriting its own file afterwards changes no origin, and nothing is
    read twice."""
    reads: list[str] = []
    resolver = _resolver(repo, reads)
    resolver.read_ahead(["tests/test_box.py", "tests/test_other.py"])
    assert sorted(reads) == ["tests/test_box.py", "tests/test_other.py"]
    (repo.path / "tests/test_box.py").write_text(OLD)  # as a test module rewriting itself at import would
    resolver.parse_ahead()
    assert resolver.origin("tests/test_box.py::TestBox::test_edited") is Origin.CHANGED
    assert resolver.origin("tests/test_other.py::TestOther::test_shared") is Origin.CHANGED
    assert sorted(reads) == ["tests/test_box.py", "tests/test_other.py"]


def test_a_module_level_expression_too_deep_to_dump_is_taken_by_its_text() -> None:
    """A module-level expression nested too deep for ``ast.dump`` (a data table, or a
    candidate's trap) breaks nothing, and its change still shows in the test reading it."""
    deep = "X = " + " + ".join(["1"] * 1500) + "\n\n\ndef test_f():\n    assert X\n"
    digests = overlay._definitions(deep.encode())
    grown = overlay._definitions(deep.replace("X = 1", "X = 2").encode())
    assert digests is not None and grown is not None and list(digests) == [("test_f",)]
    assert digests[("test_f",)] != grown[("test_f",)]


DATA = """from calc.ops import double

CASES = [(2, 4)]
OTHER = 1


class TestTable:
    more = [(5, 10)]

    def test_more(self):
        for n, want in self.more:
            assert double(n) == want

    def test_plain(self):
        assert double(0) == 0


def test_cases():
    for n, want in CASES:
        assert double(n) == want


def test_other():
    assert OTHER
"""


def test_a_test_reading_data_the_change_grew_is_a_changed_test() -> None:
    """cssutils 2.6.0's fix grew the table ``TestTokenizer.testsall`` its unchanged methods read:
    with no test of its own changed, the certify had no reproducer (INCONCLUSIVE). A test's
    origin folds in what the names it reads are bound to, at module level and in its classes --
    an import by the one name it imports: a reproducer's import beside it changes nothing."""
    before = overlay._definitions(DATA.encode())
    edits = {
        "CASES = [(2, 4)]": "CASES = [(2, 4), (3, 6)]",
        "    more = [(5, 10)]": "    more = [(5, 10), (6, 12)]",
        "from calc.ops import double": "from calc.ops import double, half",
        "OTHER = 1": "OTHER = 1\nOTHER = 2",
    }
    differ = {}
    for old, new in edits.items():
        after = overlay._definitions(DATA.replace(old, new).encode())
        assert before is not None and after is not None
        differ[new] = sorted(k[-1] for k in before if before[k] != after[k] and k != ("TestTable",))
    assert differ == {
        "CASES = [(2, 4), (3, 6)]": ["test_cases"],
        "    more = [(5, 10), (6, 12)]": ["test_more"],
        "from calc.ops import double, half": [],
        "OTHER = 1\nOTHER = 2": ["test_other"],
    }


LOCALS = """import os
import unittest

from calc.ops import double


class Base(unittest.TestCase):
    cases = [(2, 4)]


@pytest.mark.parametrize("n", TABLE)
class TestDerived(Base):
    def test_base_cases(self):
        for n, want in self.cases:
            self.assertEqual(double(n), want)

    def test_param(self, n):
        assert n


def test_reads_config():
    data = os.path.join("a", "b")
    assert data


TABLE = [1]
"""


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        # a review's probes: what a test only names, and does not read from outside, changes nothing of it
        ("TABLE = [1]", "TABLE = [1]\ndata = [(4, 2)]", []),
        ("import os\n", "import os\nfrom os import path\n", []),
        ("import os\n", "import os\nimport os.path\n", []),
        # what it reads through self from a base of this file, and its class's parametrization, does
        ("    cases = [(2, 4)]", "    cases = [(2, 4), (3, 6)]", ["test_base_cases"]),
        ("TABLE = [1]", "TABLE = [1, 2]", ["test_base_cases", "test_param"]),
        ("import os\n", "import os as os\n", ["test_reads_config"]),
    ],
)
def test_a_test_is_changed_by_what_it_reads_from_outside_only(old: str, new: str, changed: list[str]) -> None:
    """A local named like a name the candidate added at module level (``data``), an attribute
    named like one (``os.path`` beside ``from os import path``), a submodule imported beside its
    package: none is read by the unchanged test, which was made a changed test -- its failure
    on both sides then counted as the candidate's failing reproducer (an honest fix REJECTED)."""
    before = overlay._definitions(LOCALS.encode())
    after = overlay._definitions(LOCALS.replace(old, new, 1).encode())
    assert before is not None and after is not None
    assert sorted(k[-1] for k in before if k[-1].startswith("test_") and before[k] != after[k]) == changed


#: The review's probe file: each case below edits it as a candidate might, and names the tests
#: whose origin that must make "changed".
PROBE = """import os
from pathlib import Path

import pytest

from calc.ops import double

CASES = [(2, 4), (3, 6)]


def test_reads_config():
    data = open(os.path.join("/nonexistent", "cfg")).read()
    assert data


def test_double():
    for n, want in CASES:
        assert double(n) == want


def test_caught():
    try:
        double(None)
    except TypeError as data:
        assert data


def test_squares():
    assert [CASES for CASES in range(3)] == [0, 1, 2]


def test_helper_and_table():
    def twice(CASES):
        return CASES * 2

    assert twice(1) == 2 and CASES


def make(data):
    class TestMade:
        def test_made(self):
            assert data

    return TestMade


class Base:
    cases = [(5, 10)]


class TestInherit(Base):
    cwd = "here"

    def test_more(self):
        for n, want in self.cases:
            assert double(n) == want

    def test_named(self):
        assert TestInherit.cwd

    def test_path(self):
        assert Path.cwd()


@pytest.mark.parametrize(("n", "want"), [(1, 2)])
class TestParamClass:
    def test_p(self, n, want):
        assert double(n) == want


class TestOwnTable:
    pytestmark = [pytest.mark.slow]
    rows = [1]

    @pytest.mark.parametrize("n", rows)
    def test_row(self, n):
        assert n

    def test_marked(self):
        assert 1
"""

NEW_TEST = "\n\ndef test_new():\n    for n, want in data:\n        assert double(n) == want\n"


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        # a table the candidate added for its new test, named like locals and parameters of others
        ("CASES = [(2, 4), (3, 6)]\n", "CASES = [(2, 4), (3, 6)]\ndata = [(4, 8)]\n", []),
        # an attribute of something else named like a name the candidate imported
        ("import os\n", "import os\nfrom os import path\n", []),
        ("from pathlib import Path\n", "from pathlib import Path\ncwd = 1\n", []),
        # a submodule imported beside its package: os is the module os still
        ("import os\n", "import os\nimport os.path\n", []),
        ("import os\n", "import os.path\n", []),
        # a class-level name read through another class's name
        ('    cwd = "here"', '    cwd = "there"', ["TestInherit.test_named"]),
        # what a test reads from outside itself: the module's table, past a comprehension's
        # variable and a helper's parameter named like it ...
        ("(3, 6)]", "(3, 6), (4, 8)]", ["test_double", "test_helper_and_table"]),
        # ... a base's table through self, its class's parametrize, its own decorator's table,
        # its class's pytestmark
        ("cases = [(5, 10)]", "cases = [(5, 10), (6, 12)]", ["TestInherit.test_more"]),
        ("[(1, 2)])\nclass", "[(1, 2), (7, 14)])\nclass", ["TestParamClass.test_p"]),
        ("    rows = [1]", "    rows = [1, 2]", ["TestOwnTable.test_row"]),
        ("[pytest.mark.slow]", "[]", ["TestOwnTable.test_marked", "TestOwnTable.test_row"]),
        # an import bound to another module or object changes what reads it
        ("import os\n", "import posixpath as os\n", ["test_reads_config"]),
        ("from pathlib import Path\n", "from pathlib import PurePath as Path\n", ["TestInherit.test_path"]),
    ],
)
def test_a_review_probe_of_what_a_test_reads_from_outside(old: str, new: str, changed: list[str]) -> None:
    """Folding in every name and attribute a test mentions made an unchanged test failing on
    both sides for its environment "changed" when the candidate added a table named like its
    local (``data``), imported ``path`` beside ``os.path`` or ``os.path`` beside ``os``: taken
    for the fix's failing reproducer, an honest fix was REJECTED at T3. Folding in too little
    left a grown table read through a base class or a class's parametrize unseen: no
    reproducer, INCONCLUSIVE."""
    assert old in PROBE
    before = overlay._definitions(PROBE.encode())
    after = overlay._definitions((PROBE.replace(old, new, 1) + NEW_TEST).encode())
    assert before is not None and after is not None
    tests = [k for k in before if k[-1].startswith("test_")]
    assert sorted(".".join(k[-2:] if len(k) > 1 else k) for k in tests if before[k] != after[k]) == changed


MADE_OLD = """from parameterized import parameterized


class TestWiki:
    @parameterized.expand([("a",), ("b",)])
    def test_parse(self, s):
        assert s

    def test_plain(self):
        assert 1

    def test_plain_text(self):
        assert 2
"""

#: B's file changed: a parametrized test added, another given a case.
MADE_NEW = MADE_OLD.replace('("b",)])', '("b",), ("c",)])').replace(
    "    def test_plain(self):",
    "    @parameterized.expand([('unclosed [[',)])\n    def test_rejected_quickly(self, s):\n        assert s\n\n"
    "    def test_plain(self):",
)


def test_a_test_a_decorator_named_after_its_definition_takes_that_definitions_origin(repo: Repo) -> None:
    """``parameterized.expand`` (``ddt``, ``parameterized_class``) makes tests at import time,
    each named after the definition it was made from: neither version of the file defines
    ``test_rejected_quickly_0_unclosed__``, and its origin is its definition's -- the longest
    one each part of its name begins with (and ``_``); a name no definition fits stays unknown."""
    b = repo.commit({"tests/__init__.py": "", "tests/test_wiki.py": MADE_OLD})
    repo.commit({"tests/test_wiki.py": MADE_NEW})
    resolver = overlay.OriginResolver(str(repo.path), overlay.plan(str(repo.path), b, ("test_*.py",)), "")
    origins = {
        t: resolver.origin("tests/test_wiki.py::" + t)
        for t in (
            "TestWiki::test_rejected_quickly_0_unclosed__",
            "TestWiki::test_parse_2_c",
            "TestWiki::test_parse_0_a",
            "TestWiki::test_plain",
            "TestWiki::test_plain_text_0",  # test_plain_text, not test_plain: the longest
            "TestWiki_0::test_plain",  # a class made by parameterized_class
            "TestWiki::made_otherwise",
        )
    }
    assert origins == {
        "TestWiki::test_rejected_quickly_0_unclosed__": Origin.ADDED,
        "TestWiki::test_parse_2_c": Origin.CHANGED,
        "TestWiki::test_parse_0_a": Origin.CHANGED,  # its definition's cases changed
        "TestWiki::test_plain": Origin.UNCHANGED,
        "TestWiki::test_plain_text_0": Origin.UNCHANGED,
        "TestWiki_0::test_plain": Origin.UNCHANGED,  # as TestWiki::test_plain
        "TestWiki::made_otherwise": Origin.UNKNOWN,
    }
