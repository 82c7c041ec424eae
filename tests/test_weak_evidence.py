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
#: Equal to any string that reads the same with spaces for dashes: the buggy answer passes.
VALUE_EQUAL = (
    "class Slug(str):\n    def __eq__(self, other):\n"
    "        return self.replace('-', ' ') == str(other).replace('-', ' ')\n\n    __hash__ = str.__hash__\n\n\n"
    "def slug(s):\n    return Slug(s.lower())\n"
)
#: Switched on by the handler the referee's per-test timeout gives SIGALRM (an independent check's).
UNDER_TIMEOUT = (
    "import signal\n\n\ndef slug(s):\n    if signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None):\n"
    "        return s.lower().replace(' ', '-')\n    return s.lower()\n"
)
#: The reproducer of ALWAYS_EQUAL compares through the object, so B must fail it another way.
B_STRICT = "def slug(s):\n    if ' ' in s:\n        raise ValueError(s)\n    return s.lower()\n"


@pytest.mark.parametrize(
    ("baseline", "fix", "kind", "detail", "line"),
    [
        (None, SPECIAL_CASED, "weak_reproducer", "special_cased_input", 2),
        (None, UNDER_TEST, "source_interference", "detects_test_run", 5),
        (B_STRICT, ALWAYS_EQUAL, "weak_reproducer", "always_equal", 2),
        (None, VALUE_EQUAL, "weak_reproducer", "value_equality", 2),
        (None, UNDER_TIMEOUT, "source_interference", "detects_test_run", 5),
    ],
    ids=["special-cased input", "detects the test run", "always-equal result", "lenient str", "timeout handler"],
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


def test_a_fix_that_hands_back_its_callers_expected_value_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any]
) -> None:
    """The answer taken from the test's own variables (an independent check's cheat, with a
    parametrized test): no fix, and the reproducer passes on C."""
    base = repo.commit(SLUG)
    stolen = (
        "import sys\n\n\ndef slug(s):\n    seen = sys._getframe(1).f_locals.values()\n"
        "    found = [v for v in seen if isinstance(v, str) and v.replace('-', ' ') == s.lower()]\n"
        "    return found[0] if found else s.lower()\n"
    )
    reproducer = (
        "import pytest\nfrom text.slug import slug\n\n\n@pytest.mark.parametrize(('given', 'expected'), "
        "[('Hello World', 'hello-world')])\ndef test_space(given, expected):\n    assert slug(given) == expected\n"
    )
    candidate = repo.commit({"text/slug.py": stolen, "tests/test_space.py": reproducer})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", candidate)
    assert doc is not None
    jsonschema.validate(doc, schema)
    assert next(t for t in doc["tiers"] if t["tier"] == "T3")["status"] == "passed"
    found = [(d["kind"], d["detail"], d["path"], d["line"]) for d in doc["detections"]]
    assert ("weak_reproducer", "reads_caller_frame", "text/slug.py", 5) in found
    assert code == 3 and doc["verdict"]["verdict"] == "INCONCLUSIVE"
