"""Candidates whose green proves nothing, end to end: each is refused certification with its detection.

A reproducer comparing an object equal to anything, a fix that special-cases the reproducer's
exact input, code that behaves differently under a test framework -- each passes its reproducer
on C and fails it on B, so every tier passes; the record names the shape and its line, and the
verdict is INCONCLUSIVE. The honest fix beside them stays CERTIFIED.
"""

from __future__ import annotations

import pathlib
from typing import Any

import jsonschema
import pytest
from conftest import PKG, Repo, certify

SLUG = {
    "text/__init__.py": "",
    "text/slug.py": "def slug(s):\n    return s.lower()\n",
    "tests/test_slug.py": "from text.slug import slug\n\n\ndef test_lower():\n    assert slug('ABC') == 'abc'\n",
    "pyproject.toml": PKG["pyproject.toml"],
}
REPRODUCER = {
    "tests/test_space.py": (
        "from text.slug import slug\n\n\ndef test_space():\n    assert slug('Hello World') == 'hello-world'\n"
    )
}
HONEST = "def slug(s):\n    return s.lower().replace(' ', '-')\n"
SPECIAL_CASED = "def slug(s):\n    if s == 'Hello World':\n        return 'hello-world'\n    return s.lower()\n"
UNDER_TEST = (
    "import os\n\n\ndef slug(s):\n    if 'PYTEST_CURRENT_TEST' in os.environ:\n"
    "        return s.lower().replace(' ', '-')\n    return s.lower()\n"
)
ALWAYS_EQUAL = (
    "class Slug(str):\n    def __eq__(self, other):\n        return True\n\n    __hash__ = str.__hash__\n\n\n"
    "def slug(s):\n    return Slug(s.lower())\n"
)
#: The reproducer of ALWAYS_EQUAL compares through the object, so B must fail it another way.
B_STRICT = "def slug(s):\n    if ' ' in s:\n        raise ValueError(s)\n    return s.lower()\n"


@pytest.mark.parametrize(
    ("baseline", "fix", "kind", "detail", "line"),
    [
        (None, SPECIAL_CASED, "weak_reproducer", "special_cased_input", 2),
        (None, UNDER_TEST, "source_interference", "detects_test_run", 5),
        (B_STRICT, ALWAYS_EQUAL, "weak_reproducer", "always_equal", 2),
    ],
    ids=["special-cased input", "detects the test run", "always-equal result"],
)
def test_a_green_that_proves_nothing_is_not_certified(
    repo: Repo,
    tmp_path: pathlib.Path,
    schema: dict[str, Any],
    baseline: str | None,
    fix: str,
    kind: str,
    detail: str,
    line: int,
) -> None:
    base = repo.commit({**SLUG, **({"text/slug.py": baseline} if baseline else {})})
    candidate = repo.commit({"text/slug.py": fix, **REPRODUCER})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", candidate)
    assert doc is not None
    jsonschema.validate(doc, schema)
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    assert t3["status"] == "passed"  # the reproducer fails on B and passes on C...
    found = [(d["kind"], d["detail"], d["path"], d["line"]) for d in doc["detections"]]
    assert (kind, detail, "text/slug.py", line) in found  # ...and the record says why that proves nothing
    assert code == 3 and doc["verdict"]["verdict"] == "INCONCLUSIVE"
    assert any(detail in reason or kind in reason for reason in doc["verdict"]["reasons"])


def test_the_honest_fix_with_the_same_reproducer_is_certified(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(SLUG)
    candidate = repo.commit({"text/slug.py": HONEST, **REPRODUCER})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", candidate)
    assert doc is not None and code == 0, doc and doc["verdict"]
    assert not [d for d in doc["detections"] if d["kind"] in ("weak_reproducer", "source_interference")]
