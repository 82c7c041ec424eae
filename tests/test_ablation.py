"""The ``typing`` and ``baseline-replay`` ablations: the battery judged on C's bare outcomes.

Each removal must show in the verdict where the mechanism earns its keep -- a reproducer that
passes on B too, a failure B had too -- and in the record: no types, or no B outcome at all.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any

import pytest
from conftest import FIX, PKG, Repo, certify, validate

BATTERY: tuple[str, ...] = ()
TYPING = ("--ablate", "typing")
REPLAY = ("--ablate", "baseline-replay")
#: A new test that passes on B as well as on C: it shows nothing fixed.
VACUOUS = {"tests/test_half.py": "from calc.ops import half\n\n\ndef test_half():\n    assert half(4) > 0\n"}
#: A test that fails on B already, and on C: not the candidate's doing.
LEGACY = {"tests/test_legacy.py": "from calc.ops import double\n\n\ndef test_legacy():\n    assert double(3) == 7\n"}


def _verdict(repo: Repo, out: pathlib.Path, base: str, cand: str, schema: dict[str, Any], *extra: str) -> Any:
    code, doc = certify(repo, out, "--baseline", base, "--candidate", cand, *extra)
    assert doc is not None, code
    return validate(doc, schema)


@pytest.mark.parametrize("ablate", [TYPING, REPLAY], ids=["typing", "baseline-replay"])
def test_without_types_or_b_a_vacuous_test_certifies_and_a_failure_b_had_rejects(
    repo: Repo,
    tmp_path: pathlib.Path,
    schema: dict[str, Any],
    ablate: tuple[str, ...],
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = repo.commit(PKG)
    vacuous = repo.commit(VACUOUS)
    legacy = Repo(tmp_path / "legacy")
    legacy_base = legacy.commit({**PKG, **LEGACY})
    fixed = legacy.commit(FIX)
    got = {}
    for how in (BATTERY, ablate):
        got[how, "vacuous"] = _verdict(repo, tmp_path / ("v%d.json" % len(how)), base, vacuous, schema, *how)
        got[how, "legacy"] = _verdict(legacy, tmp_path / ("l%d.json" % len(how)), legacy_base, fixed, schema, *how)
    # The battery: a test passing on B shows nothing fixed; a failure B had is not the patch's.
    assert got[BATTERY, "vacuous"]["verdict"]["verdict"] == "INCONCLUSIVE"
    assert got[BATTERY, "legacy"]["verdict"]["verdict"] == "CERTIFIED"
    # Judged on C alone, both go the other way.
    vacuous_doc, legacy_doc = got[ablate, "vacuous"], got[ablate, "legacy"]
    assert vacuous_doc["verdict"]["verdict"] == "CERTIFIED"
    assert vacuous_doc["invocation"]["ablate"] == [ablate[1]]
    assert legacy_doc["verdict"]["verdict"] == "REJECTED"
    assert any("test_legacy fails on C (judged on C's outcomes alone)" in r for r in legacy_doc["verdict"]["reasons"])
    # the verdict line names the tier once: "REJECTED at T5: tests/...", not "at T5: T5: tests/..."
    said = capsys.readouterr().out
    assert re.search(r"^REJECTED at (T\d): tests/test_legacy.py::test_legacy fails on C", said, re.M), said
    # Static gates keep their role: they never had a B/C contrast to lose.
    results = [r for doc in (vacuous_doc, legacy_doc) for r in doc["results"] if r["role"] != "STATIC_GATE"]
    assert len(results) == 5 and not any(r["bug_discriminating"] for r in results)
    if ablate == TYPING:  # B ran like for like; nothing says what its outcome meant
        assert all(r["role"] is None for r in results)
        assert any(r["baseline_result"] is not None for r in results)
    else:  # no test ran on B: no result has a B outcome (a run on B would have failed the climb)
        assert all(r["baseline_result"] is None for r in results)
