"""``runner.ladder.regress.in_place``: the groups of C's session keep each module's order.

Pure logic over node ids: which tests a tier's group runs, given what it selected, what earlier
groups ran, and the suite's collection order.
"""

from __future__ import annotations

import pytest

from runner.ladder import regress

SUITE = ["t/a.py::x", "t/a.py::y", "t/a.py::C::z", "t/b.py::u", "t/b.py::v", "t/c.py::w"]


@pytest.mark.parametrize(
    ("wanted", "done", "group"),
    [
        # the tests before a selected one in its module come along, in the suite's order
        (["t/a.py::C::z"], [], ["t/a.py::x", "t/a.py::y", "t/a.py::C::z"]),
        (["t/b.py::v", "t/a.py::y"], [], ["t/a.py::x", "t/a.py::y", "t/b.py::u", "t/b.py::v"]),
        # none an earlier group ran; none after the last selected one; a module's first alone
        (["t/a.py::C::z"], ["t/a.py::x"], ["t/a.py::y", "t/a.py::C::z"]),
        (["t/b.py::u", "t/c.py::w"], [], ["t/b.py::u", "t/c.py::w"]),
        ([], [], []),
        # a test the collection lacks is kept, last: its tier says it did not run
        (["t/d.py::gone", "t/b.py::u"], [], ["t/b.py::u", "t/d.py::gone"]),
    ],
)
def test_a_group_runs_its_modules_in_the_suites_order(wanted: list[str], done: list[str], group: list[str]) -> None:
    """A test an early tier selected ran alone, before the tests of its module that precede it:
    one right only on a fresh state passed on C, though a plain run fails it (a probe)."""
    assert regress.in_place(wanted, SUITE, set(done)) == group
