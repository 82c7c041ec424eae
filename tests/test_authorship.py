"""Who wrote what is found in a test framework's place (``pytest_evidence.authorship``): the file
the runner charges a replacement to, read from what cannot pretend."""

from __future__ import annotations

import asyncio.tasks
import functools
import types
import unittest
from collections.abc import Iterator

import _pytest.runner
import pytest

from pytest_evidence.authorship import UNATTRIBUTABLE, Authorship
from pytest_evidence.originals import Originals


@pytest.fixture
def authorship() -> Iterator[Authorship]:
    originals = Originals()
    try:
        yield originals.authorship
    finally:
        originals.close()


def lenient(self: object, *args: object) -> None:
    """A replacement written in this file."""


class Lenient:
    def __call__(self, *args: object) -> None:
        """A callable instance: no file to read."""


def test_a_replacement_is_charged_to_the_file_its_code_was_written_in(authorship: Authorship) -> None:
    assert authorship.origin(lenient) == __file__
    assert authorship.origin(classmethod(lenient)) == __file__
    assert authorship.origin(property(lenient)) == __file__
    # wrapped, as a review's cheat wrapped it to read as nobody's (``partialmethod``)
    assert authorship.origin(functools.partialmethod(lenient, 1)) == __file__
    assert authorship.origin(functools.partial(functools.partial(lenient), 1)) == __file__
    # a fixture pytest wraps around it (pytest 7.4: a function of pytest's own), a function
    # that says it wraps a framework's
    assert authorship.origin(pytest.fixture(lenient)) == __file__
    assert authorship.origin(functools.wraps(unittest.TestCase.assertEqual)(lenient)) == __file__


def test_what_no_file_can_be_read_from_is_unattributable(authorship: Authorship) -> None:
    assert authorship.origin(Lenient()) == UNATTRIBUTABLE
    assert authorship.origin(len) == UNATTRIBUTABLE
    assert authorship.origin(None) == UNATTRIBUTABLE  # a name deleted


def test_a_claim_on_a_frameworks_file_holds_only_for_what_the_framework_held(authorship: Authorship) -> None:
    assert authorship.origin(unittest.TestCase.assertEqual) == unittest.case.__file__
    assert authorship.origin(vars(asyncio.tasks)["_PyTask"]) == asyncio.tasks.__file__  # nest_asyncio's choice
    forged = types.FunctionType(lenient.__code__.replace(co_filename=unittest.case.__file__), {})
    assert authorship.origin(forged) == UNATTRIBUTABLE
    posing = type("TestCase", (), {"__module__": "unittest.case"})
    assert authorship.origin(posing) == UNATTRIBUTABLE


def test_only_code_the_frameworks_wrote_is_theirs(authorship: Authorship) -> None:
    """pytest 7.4 and pytest-asyncio add fixtures of their own to a ``TestCase``: code in their
    modules, which may be nested in their functions."""
    assert authorship.made_by_frameworks(types.FunctionType(_pytest.runner.show_test_item.__code__, {}))
    assert authorship.made_by_frameworks(pytest.fixture(types.FunctionType(_pytest.runner.show_test_item.__code__, {})))
    assert not authorship.made_by_frameworks(lenient)
    assert not authorship.made_by_frameworks(pytest.fixture(lenient))
    assert not authorship.made_by_frameworks(Lenient())
