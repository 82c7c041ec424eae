"""``locate``: failures made relative to the root node ids are relative to."""

from __future__ import annotations

import os
import pathlib

from pytest_evidence import locate
from pytest_evidence.model import Failure, FailureKind, Observation, Outcome


def test_observations_locate_failures_and_keep_the_rest_as_they_are(tmp_path: pathlib.Path) -> None:
    real = tmp_path / "checkout"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    passed = Observation("t.py::a", Outcome.PASS, 0.1, None, "", (Outcome.PASS,))
    failure = Failure(
        FailureKind.ASSERTION,
        "assert 1 == 2 in %s" % os.path.join(str(real), "t.py"),
        os.path.join(str(link), "t.py"),
        3,
        "%s:3: AssertionError" % os.path.join(str(real), "t.py"),
    )
    failed = Observation("t.py::b", Outcome.FAIL, 0.1, failure, "", (Outcome.FAIL,))
    kept, located = locate.observations([passed, failed], str(link))
    assert kept is passed  # nothing to locate: not copied
    relative = Failure(FailureKind.ASSERTION, "assert 1 == 2 in t.py", "t.py", 3, "t.py:3: AssertionError")
    assert located == Observation("t.py::b", Outcome.FAIL, 0.1, relative, "", (Outcome.FAIL,))
