"""Every attack gets a verdict: one test per threat of ``docs/referee.md``'s threat table.

Each builds a real repository in a temp dir (B with a bug, the candidate as a commit on it) and
certifies the candidate through the runner. An attack must end REJECTED or INCONCLUSIVE with its
detection, exit 1 or 3 and a record -- never "bad input" (exit 2), which a harness reads as its
own mistake. The honest candidates beside them, carrying real-world noise, must stay CERTIFIED.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import os
import pathlib
import py_compile
import signal
import subprocess
import sys

import pytest
from conftest import FIX, PKG, Record, Repo, certify

from runner import netns

REPRODUCER = "tests/test_half.py::test_half"


def _kinds(doc: Record) -> dict[str, list[Record]]:
    found: dict[str, list[Record]] = {}
    for d in doc["detections"]:
        found.setdefault(d["kind"], []).append(d)
    return found


def _result(doc: Record, test_id: str) -> Record:
    return next(r for r in doc["results"] if r["test_id"] == test_id)


def test_threat_reproducer_module_calls_os_exit_at_import(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(PKG)
    attack = repo.commit({"tests/test_half.py": "import os\nos._exit(0)\n\n\ndef test_half():\n    assert True\n"})
    args = ("--baseline", base, "--candidate", attack, "--reproducer", REPRODUCER, "--full")  # climb on after it
    code, doc = certify(repo, tmp_path / "e.json", *args)
    assert code == 1 and doc is not None and doc["verdict"]["verdict"] == "REJECTED"
    kinds = _kinds(doc)
    assert [d["detail"] for d in kinds["tamper"]] == ["ends_session"]
    # The reapplication keeps the new test without the module-level os._exit (or drops it: lost).
    ran = any(r["test_id"] == REPRODUCER for r in doc["results"])
    assert ran or [d["test_id"] for d in kinds["reproducer_lost_to_tamper"]] == [REPRODUCER]


def test_an_attack_stops_the_climb_at_the_integrity_check(repo: Repo, tmp_path: pathlib.Path) -> None:
    """REJECTED whatever the tiers would say: nothing after the integrity check runs (``--full`` climbs on)."""
    base = repo.commit(PKG)
    attack = repo.commit(
        {
            **FIX,
            "tests/test_ops.py": "import pytest\n"
            + OPS_TESTS.replace("def test_double", "@pytest.mark.skip\ndef test_double"),
        }
    )
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", attack)
    assert code == 1 and doc is not None
    assert doc["verdict"]["verdict"] == "REJECTED" and doc["verdict"]["halted_at"] is None
    assert [d["detail"] for d in _kinds(doc)["tamper"]] == ["skip_marker"]
    tiers = {t["tier"]: t for t in doc["tiers"]}
    assert tiers["T0"]["status"] == "passed" and doc["baseline_run"] is None
    assert {r["role"] for r in doc["results"]} == {"STATIC_GATE"}  # T0's parses, and no test ran
    for name in ("T1", "T2", "T3", "T4", "T5", "T6", "T7"):
        assert tiers[name]["status"] == "not_run" and "attacked the referee (skip_marker)" in tiers[name]["note"]


def test_a_reproducer_named_beside_an_attack_is_said_to_be_unchecked(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack's verdict stands (REJECTED, not bad input), and a ``--reproducer`` the climb
    never reached is said to be unchecked: a mistyped id went unsaid under the verdict."""
    base = repo.commit(PKG)
    attack = repo.commit(
        {
            **FIX,
            "tests/test_ops.py": "import pytest\n" + OPS_TESTS.replace("def test_d", "@pytest.mark.skip\ndef test_d"),
        }
    )
    args = ("--baseline", base, "--candidate", attack, "--reproducer", "tests/test_half.py::test_hlaf")
    code, doc = certify(repo, tmp_path / "e.json", *args)
    assert code == 1 and doc is not None and doc["verdict"]["verdict"] == "REJECTED"
    said = " ".join(capsys.readouterr().err.split())
    assert "--reproducer tests/test_half.py::test_hlaf not checked: the climb stopped at the attack" in said


def test_threat_reproducer_module_that_kills_collection_unseen_is_a_crash(repo: Repo, tmp_path: pathlib.Path) -> None:
    """A segfault at import, and a ``SystemExit`` reached through a name the scan cannot read."""
    base = repo.commit(PKG)
    for n, kill in enumerate(
        ["import ctypes\nctypes.string_at(0)\n", "import builtins\nraise getattr(builtins, 'System' + 'Exit')(0)\n"]
    ):
        attack = repo.commit({"tests/test_half.py": kill + "\n\ndef test_half():\n    assert True\n"})
        out = tmp_path / ("e%d.json" % n)
        code, doc = certify(repo, out, "--baseline", base, "--candidate", attack, "--reproducer", REPRODUCER)
        assert code == 1 and doc is not None and doc["verdict"]["verdict"] == "REJECTED", kill
        crashes = _kinds(doc)["crash"]
        assert any(d["test_id"] == REPRODUCER for d in crashes)
        assert all(d["path"] == "tests/test_half.py" for d in crashes)
        assert doc["verdict"]["halted_at"] == "T3"


def test_threat_reproducer_module_that_does_not_import_on_c_is_a_failure_not_an_unknown_id(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """The test without the fix: the reproducer imports what the candidate never wrote."""
    base = repo.commit(PKG)
    attack = repo.commit(
        {"tests/test_half.py": "from calc.ops import third\n\n\ndef test_half():\n    assert third(3) == 1\n"}
    )
    code, doc = certify(
        repo, tmp_path / "e.json", "--baseline", base, "--candidate", attack, "--reproducer", REPRODUCER
    )
    assert code == 1 and doc is not None and doc["verdict"]["verdict"] == "REJECTED"
    assert doc["verdict"]["reasons"] == ["T3: no-fix: reproducer %s fails on B and on C" % REPRODUCER]


def _judge(
    repo: Repo, tmp_path: pathlib.Path, before: dict[str, str], after: dict[str, str], *args: str
) -> tuple[int, Record | None]:
    """Certify ``after`` (the candidate's files) against ``before`` (B's), with the reproducer."""
    base, cand = repo.commit(before), repo.commit(after)
    return certify(
        repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--reproducer", REPRODUCER, *args
    )


def _lost(
    repo: Repo, tmp_path: pathlib.Path, before: dict[str, str], after: dict[str, str]
) -> tuple[Record, list[Record]]:
    """The record of an INCONCLUSIVE candidate, and its ``empty_collection`` detections."""
    code, doc = _judge(repo, tmp_path, before, after)
    assert code == 3 and doc is not None and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    return doc, _kinds(doc)["empty_collection"]


def test_threat_a_fix_that_breaks_another_test_modules_import_is_rejected(repo: Repo, tmp_path: pathlib.Path) -> None:
    """The candidate removes a name an unchanged test module imports: pytest reports a collection
    error and goes on, and that module's passing tests would drop out of C's suite unseen."""
    code, doc = _judge(
        repo,
        tmp_path,
        PKG,
        {**FIX, "calc/ops.py": FIX["calc/ops.py"].replace("def double(n):\n    return n * 2\n", "")},
    )
    assert code == 1 and doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    assert doc["verdict"]["halted_at"] == "T4"
    crashes = _kinds(doc)["crash"]
    assert [(d["path"], d["detail"]) for d in crashes] == [("tests/test_ops.py", "collection_error")]
    assert "ImportError" in crashes[0]["message"] or "cannot import" in crashes[0]["message"]


def test_a_module_that_collects_only_beside_the_others_on_b_is_broken_by_the_candidate(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """B collects the whole suite with C's tests, as C did: ``tests/test_z.py`` reads what
    ``tests/test_a.py`` registers, and errors when collected alone on B too."""
    plugins = "from calc.registry import ITEMS\n\nITEMS['x'] = 1\n"
    code, doc = _judge(
        repo,
        tmp_path,
        {
            **PKG,
            "calc/registry.py": "ITEMS = {}\n",
            "calc/plugins.py": plugins,
            "tests/test_a.py": "import calc.plugins\n\n\ndef test_a():\n    pass\n",
            "tests/test_z.py": (
                "from calc.registry import ITEMS\n\nVALUE = ITEMS['x']\n\n\ndef test_z():\n    assert VALUE\n"
            ),
        },
        {**FIX, "calc/plugins.py": plugins.replace("'x'", "'y'")},
    )
    assert code == 1 and doc is not None and doc["verdict"]["halted_at"] == "T4", doc and doc["verdict"]
    assert [d["path"] for d in _kinds(doc)["crash"]] == ["tests/test_z.py"]


def test_a_module_that_errors_on_b_too_when_the_whole_suite_collects_is_not_the_candidates(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """Two test modules of one basename without packages: pytest's import file mismatch, on B and
    on C alike when the whole suite collects (not when the module collects alone)."""
    same = "def test_same():\n    pass\n"
    code, doc = _judge(repo, tmp_path, {**PKG, "tests/a/test_x.py": same, "tests/b/test_x.py": same}, FIX)
    assert doc is not None
    assert "crash" not in _kinds(doc), doc["detections"]
    assert code == 0, doc["verdict"]


def test_threat_a_fix_that_skips_an_unchanged_test_module_is_not_certified(repo: Repo, tmp_path: pathlib.Path) -> None:
    """The candidate turns a flag a test module skips on: its passing tests leave the collection."""
    code, doc = _judge(
        repo,
        tmp_path,
        {
            **PKG,
            "calc/flags.py": "ENABLED = True\n",
            "tests/test_flag.py": (
                "import pytest\n\nfrom calc import flags\n\nif not flags.ENABLED:\n"
                "    pytest.skip('off', allow_module_level=True)\n\n\ndef test_flag():\n    pass\n"
            ),
        },
        {**FIX, "calc/flags.py": "ENABLED = False\n"},
    )
    assert code == 3 and doc is not None and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    empty = _kinds(doc)["empty_collection"]
    assert [(d["path"], d["detail"]) for d in empty] == [("tests/test_flag.py", "not_collected")]


def test_threat_a_fix_that_makes_an_unchanged_test_skip_is_not_certified(repo: Repo, tmp_path: pathlib.Path) -> None:
    """The candidate turns a flag a ``skipif`` reads: the test still collects, and is skipped.
    B, run again like for like, passes it."""
    flagged = (
        "import pytest\n\nfrom calc import flags\n\n\n@pytest.mark.skipif('not flags.ENABLED')\n"
        "def test_flag():\n    pass\n\n\ndef test_other():\n    pass\n"
    )
    doc, lost = _lost(
        repo,
        tmp_path,
        {**PKG, "calc/flags.py": "ENABLED = True\n", "tests/test_flag.py": flagged},
        {**FIX, "calc/flags.py": "ENABLED = False\n"},
    )
    assert [(d["test_id"], d["detail"]) for d in lost] == [("tests/test_flag.py::test_flag", "skipped_on_c")]
    flip = doc["annotations"]["tests/test_flag.py::test_flag"]["flip"]
    assert flip["baseline_same_selection"] == "pass" and flip["rests_on"].startswith("evidence lost")
    assert _result(doc, "tests/test_flag.py::test_other")["candidate_result"] == "pass"
    assert {t["tier"]: t["status"] for t in doc["tiers"]}["T3"] == "passed"


FLAGGED_DOUBLE = (
    "import pytest\n\nfrom calc import flags, ops\n\n\n@pytest.mark.skipif('not flags.ENABLED')\n"
    "def test_feature():\n    assert ops.double(3) == 6\n"
)
BROKEN_DOUBLE = FIX["calc/ops.py"].replace("return n * 2", "return n * 2 + (n == 3)")
#: The flags module bound without an import statement: the integrity check's static scan of what a
#: test file changes at import (``patches_code_under_test``) does not see through it, the runs do.
HIDDEN_FLAGS = 'import importlib\n\nflags = importlib.import_module("calc.flags")\n'


def test_threat_a_new_test_file_that_silences_an_existing_test_on_both_sides_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """The candidate breaks ``double(3)`` and its reproducer's file turns off, at import, the flag
    the test of it skips on: the test is skipped on C, and on B too once C's tests are laid over
    B. B's own full run passes it: the certification never ran it on C."""
    silencing = HIDDEN_FLAGS + "flags.ENABLED = False\n" + FIX["tests/test_half.py"]
    doc, lost = _lost(
        repo,
        tmp_path,
        {**PKG, "calc/flags.py": "ENABLED = True\n", "tests/test_feature.py": FLAGGED_DOUBLE},
        {**FIX, "calc/ops.py": BROKEN_DOUBLE, "tests/test_half.py": silencing},
    )
    assert [(d["test_id"], d["detail"]) for d in lost] == [("tests/test_feature.py::test_feature", "skipped_on_c")]
    assert "skipped on B too in the C run's selection" in lost[0]["message"]
    flip = doc["annotations"]["tests/test_feature.py::test_feature"]["flip"]
    assert [flip["baseline_full_suite"], flip["baseline_same_selection"]] == ["pass", "skipped"]


def test_threat_the_reproducers_file_silencing_a_test_beside_it_on_both_sides_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """As above, in the file the candidate changes to add its reproducer (T3, where B runs with
    C's tests in the same session): the flag is turned off by the file itself, its import of the
    flags left as it was (removing it is tamper of its own)."""
    hidden = HIDDEN_FLAGS.replace("flags =", "hidden =")
    silencing = hidden + "hidden.ENABLED = False\n" + FLAGGED_DOUBLE
    _doc, lost = _lost(
        repo,
        tmp_path,
        {**PKG, "calc/flags.py": "ENABLED = True\n", "tests/test_half.py": FLAGGED_DOUBLE},
        {**FIX, "calc/ops.py": BROKEN_DOUBLE, "tests/test_half.py": silencing + "\n\n" + FIX["tests/test_half.py"]},
    )
    assert [(d["test_id"], d["detail"]) for d in lost] == [("tests/test_half.py::test_feature", "skipped_on_c")]
    assert "skipped on B too in the C run's selection" in lost[0]["message"]


def test_threat_a_new_test_file_that_breaks_another_modules_collection_on_both_sides_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """The reproducer's new file deletes, at import, the flag another module reads: that module
    errors at collection on C and on B with C's tests alike -- not the environment's doing, since
    B's own run passed its tests."""
    breaking = HIDDEN_FLAGS + "del flags.ENABLED\n" + FIX["tests/test_half.py"]
    _doc, lost = _lost(
        repo,
        tmp_path,
        {
            **PKG,
            "calc/flags.py": "ENABLED = True\n",
            "tests/test_zfeature.py": FLAGGED_DOUBLE.replace("'not flags.ENABLED'", "not flags.ENABLED, reason='off'"),
        },
        {**FIX, "calc/ops.py": BROKEN_DOUBLE, "tests/test_half.py": breaking},
    )
    assert [(d["path"], d["detail"]) for d in lost] == [("tests/test_zfeature.py", "not_collected")]
    assert "nor on B with C's tests" in lost[0]["message"] and "passed 1 of its tests" in lost[0]["message"]


def test_threat_a_new_test_file_that_breaks_another_modules_test_class_on_both_sides_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """As above, one class down: the module still collects, the class whose parameters the new
    file takes away errors on C and on B with C's tests, and B's own run passed its tests."""
    breaking = HIDDEN_FLAGS + "flags.SIZES = None\n" + FIX["tests/test_half.py"]
    in_class = (
        "import pytest\n\nfrom calc import flags, ops\n\n\ndef test_zero():\n    assert ops.double(0) == 0\n\n\n"
        "class TestFeature:\n    @pytest.mark.parametrize('n', flags.SIZES)\n"
        "    def test_double(self, n):\n        assert ops.double(n) == 2 * n\n"
    )
    _doc, lost = _lost(
        repo,
        tmp_path,
        {**PKG, "calc/flags.py": "SIZES = [1, 2, 3]\n", "tests/test_zfeature.py": in_class},
        {**FIX, "calc/ops.py": BROKEN_DOUBLE, "tests/test_half.py": breaking},
    )
    assert [(d["path"], d["detail"]) for d in lost] == [("tests/test_zfeature.py", "not_collected")]
    assert lost[0]["message"].startswith("tests/test_zfeature.py::TestFeature does not collect on C")
    assert "passed 3 of its tests" in lost[0]["message"]


def test_a_class_of_the_candidates_tests_that_errors_on_both_sides_and_held_no_test_loses_nothing(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """markdown 3.11.1's test module imports ``unittest.TestSuite``, a ``Test*`` class pytest
    cannot collect, and a test module of its suite turns that warning into an error: the class
    errors at collection on C and on B with C's tests, while the module's tests all collect. No
    test B passed is lost, and the honest fix is certified (it was INCONCLUSIVE, the whole file
    taken for uncollected)."""
    strict = PKG["pyproject.toml"] + 'filterwarnings = ["error::pytest.PytestCollectionWarning"]\n'
    other = "from calc.ops import double\n\n\ndef test_double_one():\n    assert double(1) == 2\n"
    code, doc = _judge(
        repo,
        tmp_path,
        {**PKG, "pyproject.toml": strict, "tests/test_half.py": other},
        {**FIX, "tests/test_half.py": "from unittest import TestSuite\n" + other + "\n\n" + FIX["tests/test_half.py"]},
    )
    assert code == 0 and doc is not None and doc["verdict"]["verdict"] == "CERTIFIED", doc and doc["verdict"]
    assert "empty_collection" not in _kinds(doc)
    assert _result(doc, REPRODUCER)["bug_discriminating"] is True


def test_a_test_the_trusted_tests_retire_with_skip_is_no_loss(repo: Repo, tmp_path: pathlib.Path) -> None:
    """The fix's own test patch (``--tests-from``) disables a test with ``skip()`` in its body,
    as tabulate 0.8.9's did: skipped on both sides, but by its own changed definition."""
    legacy = "def test_legacy():\n    pass\n"
    retired = "import pytest\n\n\ndef test_legacy():\n    pytest.skip('until it is reimplemented')\n"
    base = repo.commit({**PKG, "tests/test_legacy.py": legacy})
    fixed = repo.commit({**FIX, "tests/test_legacy.py": retired})
    trusted = ("--baseline", base, "--candidate", fixed, "--tests-from", fixed, "--reproducer", REPRODUCER)
    code, doc = certify(repo, tmp_path / "e.json", *trusted)
    assert doc is not None
    assert "empty_collection" not in _kinds(doc), doc["detections"]
    assert code == 0, doc["verdict"]


@pytest.mark.parametrize(
    "patch",
    ["from calc import ops\n\nops.double = lambda n: n * 2\n", "import calc.flags\n\ncalc.flags.ENABLED = False\n"],
)
def test_threat_a_test_file_that_patches_the_code_under_test_at_import_is_rejected(
    repo: Repo, tmp_path: pathlib.Path, patch: str
) -> None:
    """Patched at import, the code under test is patched for every test of the session, on B with
    C's tests as on C: a broken ``double`` would read as an order effect, a silenced test as no
    flip. A test changes the code in a fixture (``monkeypatch``), undone after it."""
    base = repo.commit({**PKG, "calc/flags.py": "ENABLED = True\n", "tests/test_feature.py": FLAGGED_DOUBLE})
    attack = repo.commit({**FIX, "calc/ops.py": BROKEN_DOUBLE, "tests/test_half.py": patch + FIX["tests/test_half.py"]})
    code, doc = certify(
        repo, tmp_path / "e.json", "--baseline", base, "--candidate", attack, "--reproducer", REPRODUCER
    )
    assert code == 1 and doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    tampered = _kinds(doc)["tamper"]
    assert [(d["path"], d["detail"]) for d in tampered] == [("tests/test_half.py", "patches_code_under_test")]


def test_threat_a_test_b_xpasses_that_c_makes_xfail_is_not_certified(repo: Repo, tmp_path: pathlib.Path) -> None:
    """Under a non-strict xfail a passing body is ``xpassed``: a pass all the same."""
    loose = (
        "import pytest\n\nfrom calc import ops\n\n\n@pytest.mark.xfail(reason='slow hosts', strict=False)\n"
        "def test_big():\n    assert ops.double(3) == 6\n"
    )
    _doc, lost = _lost(repo, tmp_path, {**PKG, "tests/test_big.py": loose}, {**FIX, "calc/ops.py": BROKEN_DOUBLE})
    assert [(d["test_id"], d["detail"]) for d in lost] == [("tests/test_big.py::test_big", "skipped_on_c")]
    assert "passes on B and is xfailed on C" in lost[0]["message"]


def test_threat_a_renamed_parametrization_that_skips_on_c_is_not_certified(repo: Repo, tmp_path: pathlib.Path) -> None:
    """A value renamed (``rev2`` -> ``rev_2``) is excused as a value the fix changed, on the
    condition that its new id proves something: skipped on C, it does not."""
    codecs = (
        "import pytest\n\nfrom calc.codecs import CODECS\n\n\n@pytest.mark.parametrize('name', sorted(CODECS))\n"
        "def test_roundtrip(name):\n    if not CODECS[name]:\n        pytest.skip('unavailable')\n"
    )
    before = {**PKG, "calc/codecs.py": "CODECS = {'rev2': True}\n", "tests/test_codecs.py": codecs}
    _doc, lost = _lost(repo, tmp_path, before, {**FIX, "calc/codecs.py": "CODECS = {'rev_2': False}\n"})
    assert [(d["test_id"], d["detail"]) for d in lost] == [
        ("tests/test_codecs.py::test_roundtrip[rev_2]", "skipped_on_c")
    ]
    assert "replaces tests/test_codecs.py::test_roundtrip[rev2]" in lost[0]["message"]


def test_threat_a_test_beside_the_reproducer_that_the_fix_makes_xfail_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """T3, where B runs with C's tests in the same session: a test beside the reproducer expects
    to fail when a flag is off, and the candidate turns it off."""
    beside = (
        "\n\nimport pytest\n\nfrom calc import flags\n\n\n"
        "@pytest.mark.xfail('not flags.ENABLED', reason='off')\ndef test_extra():\n    assert flags.ENABLED\n"
    )
    doc, lost = _lost(
        repo,
        tmp_path,
        {**PKG, "calc/flags.py": "ENABLED = True\n", "tests/test_half.py": beside},
        {**FIX, "tests/test_half.py": FIX["tests/test_half.py"] + beside, "calc/flags.py": "ENABLED = False\n"},
    )
    assert [(d["test_id"], d["detail"]) for d in lost] == [("tests/test_half.py::test_extra", "skipped_on_c")]
    assert "is xfailed on C" in lost[0]["message"]
    assert _result(doc, REPRODUCER)["bug_discriminating"] is True


def test_threat_a_test_beside_the_reproducer_that_stops_being_collected_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """The test file the candidate changes (to add its reproducer) holds a passing test class; the
    candidate gives its source base an ``__init__``, so pytest no longer collects the class."""
    old = "from calc.base import Base\n\n\nclass TestOld(Base):\n    def test_old(self):\n        pass\n"
    half = "\n\ndef test_half():\n    from calc.ops import half\n\n    assert half(4) == 2\n"
    code, doc = _judge(
        repo,
        tmp_path,
        {
            **PKG,
            "calc/base.py": "class Base:\n    pass\n",
            "tests/test_half.py": (
                "from calc.base import Base\n\n\nclass TestOld(Base):\n    def test_old(self):\n        pass\n"
            ),
        },
        {
            **FIX,
            "calc/base.py": "class Base:\n    def __init__(self, *a):\n        pass\n",
            "tests/test_half.py": old + half,
        },
    )
    assert code == 3 and doc is not None, doc and doc["verdict"]
    empty = _kinds(doc)["empty_collection"]
    assert [(d["path"], d["detail"]) for d in empty] == [("tests/test_half.py", "not_collected")]


def test_threat_a_test_module_that_ends_bs_whole_collection_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """The candidate breaks an unchanged test module's import and adds a test module that ends
    pytest's collection only beside that module on B's sources: B cannot be collected like for
    like, so the loss is not judged -- and not certified."""
    killer = (
        "import ctypes\nimport sys\n\nimport calc.extra\n\n"
        "if 'test_b' in sys.modules and hasattr(calc.extra, 'helper'):\n    ctypes.string_at(0)\n\n\n"
        "def test_zz():\n    pass\n"
    )
    code, doc = _judge(
        repo,
        tmp_path,
        {
            **PKG,
            "calc/extra.py": "def helper():\n    return 0\n",
            "tests/test_b.py": "from calc.extra import helper\n\n\ndef test_b():\n    assert helper() == 0\n",
        },
        {**FIX, "calc/extra.py": "X = 1\n", "tests/test_zz.py": killer},
    )
    assert code in (1, 3) and doc is not None, doc and doc["verdict"]
    assert doc["verdict"]["verdict"] != "CERTIFIED"


SIZES = {
    **PKG,
    "calc/sizes.py": "SIZES = [1, 2, 3]\n",
    "tests/test_sizes.py": (
        "import pytest\n\nfrom calc.sizes import SIZES\n\n\n@pytest.mark.parametrize('n', SIZES)\n"
        "def test_size(n):\n    assert n > 0\n"
    ),
}


@pytest.mark.parametrize("sizes", ["[1, 2, 4]", "[1, 2, 4, 5]"])
def test_an_honest_fix_that_changes_the_values_a_test_is_parametrized_over_is_certified(
    repo: Repo, tmp_path: pathlib.Path, sizes: str
) -> None:
    """The ids come from the values (``test_size[3]`` becomes ``test_size[4]``): no test is lost."""
    code, doc = _judge(repo, tmp_path, SIZES, {**FIX, "calc/sizes.py": "SIZES = %s\n" % sizes})
    assert doc is not None
    assert "empty_collection" not in _kinds(doc), doc["detections"]
    assert code == 0, doc["verdict"]


def test_an_honest_fix_that_drops_a_value_its_test_failed_on_is_certified(repo: Repo, tmp_path: pathlib.Path) -> None:
    """Only what passed on B can be lost: the value B failed on (``-1``) goes, nothing is lost."""
    failing = {**SIZES, "calc/sizes.py": "SIZES = [1, 2, -1]\n"}
    code, doc = _judge(repo, tmp_path, failing, {**FIX, "calc/sizes.py": "SIZES = [1, 2]\n"})
    assert doc is not None
    assert "empty_collection" not in _kinds(doc), doc["detections"]
    assert code == 0, doc["verdict"]


def test_threat_a_fix_that_drops_a_value_a_test_is_parametrized_over_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """The function still collects, under fewer parameters: the value dropped takes its test along."""
    _doc, lost = _lost(repo, tmp_path, SIZES, {**FIX, "calc/sizes.py": "SIZES = [1, 2]\n"})
    assert [(d["path"], d["detail"]) for d in lost] == [("tests/test_sizes.py", "not_collected")]
    assert "tests/test_sizes.py::test_size[3]" in lost[0]["message"]


OLD_WITH_DOCTEST = '\n\ndef old():\n    """\n    >>> old()\n    0\n    """\n    return 0\n'


def test_an_honest_fix_that_removes_a_function_with_a_doctest_is_certified(repo: Repo, tmp_path: pathlib.Path) -> None:
    before = {**PKG, "calc/ops.py": PKG["calc/ops.py"] + OLD_WITH_DOCTEST}
    code, doc = _judge(repo, tmp_path, before, FIX, "--", "--doctest-modules", "calc", "tests")
    assert doc is not None
    assert "empty_collection" not in _kinds(doc), doc["detections"]
    assert code == 0, doc["verdict"]


def test_threat_a_fix_that_strips_the_doctest_of_a_function_it_keeps_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """Examples taken out of a docstring are a test deleted, though not from a test file."""
    before = {**PKG, "calc/ops.py": PKG["calc/ops.py"] + OLD_WITH_DOCTEST}
    stripped = FIX["calc/ops.py"] + OLD_WITH_DOCTEST.replace('    """\n    >>> old()\n    0\n    """\n', "")
    code, doc = _judge(
        repo, tmp_path, before, {**FIX, "calc/ops.py": stripped}, "--", "--doctest-modules", "calc", "tests"
    )
    assert code == 3 and doc is not None and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    lost = _kinds(doc)["empty_collection"]
    assert [(d["path"], d["detail"]) for d in lost] == [("calc/ops.py", "not_collected")]
    assert "calc/ops.py::calc.ops.old" in lost[0]["message"]


@pytest.mark.parametrize(
    ("module", "detail"),
    [
        ("import no_such_module_xyz\n\n\ndef test_half():\n    pass\n", "missing_module"),
        (
            "import pytest\n\npytest.skip('not here', allow_module_level=True)\n\n\ndef test_half():\n    pass\n",
            "not_collected",
        ),
    ],
    ids=["lacks-a-dependency", "not-collected"],
)
def test_a_designated_reproducer_that_cannot_run_here_is_unrunnable_not_bad_input(
    repo: Repo, tmp_path: pathlib.Path, module: str, detail: str
) -> None:
    code, doc = _judge(repo, tmp_path, PKG, {**FIX, "tests/test_half.py": module})
    assert doc is not None
    assert code == 3, doc["verdict"]
    unrunnable = _kinds(doc)["unrunnable_test"]
    assert [(d["test_id"], d["detail"]) for d in unrunnable] == [(REPRODUCER, detail)]


OPS_TESTS = PKG["tests/test_ops.py"]
HALF_TEST = "\n\ndef test_half():\n    from calc.ops import half\n\n    assert half(4) == 2\n"
FAKE = (
    "import sys\nimport types\n\nsys.modules['calc.ops'] = types.SimpleNamespace(double=lambda n: 2 * n, "
    "half=lambda n: n // 2)\n"
)


@pytest.mark.parametrize(
    ("attack", "tampered", "detail"),
    [
        ("deleted_test", "from calc.ops import double\n", "deleted_test"),
        ("renamed_test", OPS_TESTS.replace("def test_double", "def test_doubled"), "deleted_test"),
        (
            "skip_marker",
            "import pytest\n" + OPS_TESTS.replace("def test_double", "@pytest.mark.skip\ndef test_double"),
            "skip_marker",
        ),
        (
            "xfail_marker",
            "import pytest\n" + OPS_TESTS.replace("def test_double", "@pytest.mark.xfail\ndef test_double"),
            "skip_marker",
        ),
        ("weakened_assertion", OPS_TESTS.replace("assert double(2) == 4", "double(2)"), "weakened_assertion"),
        ("loosened_comparison", OPS_TESTS.replace("assert double(2) == 4", "assert double(2) >= 0"), "modified_test"),
        ("sys_modules_fake", FAKE + OPS_TESTS, "sys_modules"),
    ],
)
def test_threat_a_tampered_test_file_holding_the_designated_reproducer(
    repo: Repo, tmp_path: pathlib.Path, attack: str, tampered: str, detail: str
) -> None:
    """The held-out attacks that ended as bad input: the candidate adds its reproducer to the test
    file it tampers with. The trusted tests come back test by test, the reproducer stays."""
    base = repo.commit(PKG)
    cand = repo.commit({"calc/ops.py": FIX["calc/ops.py"], "tests/test_ops.py": tampered + HALF_TEST})
    reproducer = "tests/test_ops.py::test_half"
    args = ("--baseline", base, "--candidate", cand, "--reproducer", reproducer, "--full")  # climb on after it
    code, doc = certify(repo, tmp_path / "e.json", *args)
    assert doc is not None
    assert code == 1 and doc["verdict"]["verdict"] == "REJECTED", (attack, doc["verdict"])
    assert detail in {d["detail"] for d in _kinds(doc)["tamper"]}
    assert _result(doc, reproducer)["bug_discriminating"] is True  # it ran, on the trusted tests
    assert _result(doc, "tests/test_ops.py::test_double")["candidate_result"] == "pass"


def test_threat_new_test_that_passes_half_the_time_is_flaky_not_a_regression(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """It alternates: fails, passes, fails ... across processes (a counter file beside it)."""
    base = repo.commit({**PKG, ".gitignore": ".count\n"})
    coin = (
        "import pathlib\n\n_N = pathlib.Path(__file__).with_name('.count')\n\n\n"
        "def test_coin():\n"
        "    n = int(_N.read_text()) if _N.exists() else 0\n"
        "    _N.write_text(str(n + 1))\n"
        "    assert n % 2 == 1\n"
    )
    candidate = repo.commit({**FIX, "tests/test_coin.py": coin})
    code, doc = certify(
        repo,
        tmp_path / "e.json",
        "--baseline",
        base,
        "--candidate",
        candidate,
        "--reruns",
        "0",
        "--reproducer",
        REPRODUCER,
    )
    assert doc is not None
    assert code == 3, doc["verdict"]
    assert "test tests/test_coin.py::test_coin is quarantined as flaky" in doc["verdict"]["reasons"][0]
    coin_id = "tests/test_coin.py::test_coin"
    assert _result(doc, coin_id)["candidate_result"] == "flaky"
    assert any(d["test_id"] == coin_id for d in _kinds(doc)["flaky_quarantined"])
    assert doc["annotations"][coin_id]["bc_class"] != "regression"
    assert doc["invocation"]["stability_runs"] == 3


def test_honest_fix_that_strengthens_an_existing_test_is_certified_by_it(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SWE-bench's FAIL_TO_PASS: no new test, the changed one fails on B and passes on C. The
    trusted tests are the candidate's own here, and the runner says so: nothing checked them."""
    base = repo.commit({**PKG, "tests/test_half.py": "from calc.ops import half\n\n\ndef test_half():\n    pass\n"})
    candidate = repo.commit(FIX)
    # The harness's test patch holds the same test edits (as SWE-bench keeps it): not tamper.
    code, doc = certify(
        repo, tmp_path / "e.json", "--baseline", base, "--candidate", candidate, "--tests-from", candidate
    )
    assert doc is not None
    assert code == 0, doc["verdict"]
    result = _result(doc, REPRODUCER)
    assert result["role"] == "BUG_REPRODUCTION" and result["bug_discriminating"] is True
    said = " ".join(capsys.readouterr().err.split())
    assert "is the candidate itself: its test changes are trusted, not checked" in said


def test_a_strengthened_test_declared_and_designated_is_judged_as_c_has_it(repo: Repo, tmp_path: pathlib.Path) -> None:
    """No trusted test patch: the candidate strengthens an existing test, declares the change and
    designates it. Its B result is C's version run on B -- failing there, the bug is shown fixed.
    It was B's own version, from B's suite run: passing, so no reproducer failed on B (an
    independent check's honest fixes of dictdiffer, Box and configobj, each extending a test)."""
    base = repo.commit({**PKG, "tests/test_half.py": "from calc.ops import half\n\n\ndef test_half():\n    pass\n"})
    declared = ("--expected-change", REPRODUCER, "--reproducer", REPRODUCER)
    only_test = repo.commit({"tests/test_half.py": FIX["tests/test_half.py"]})
    code, doc = certify(repo, tmp_path / "n.json", "--baseline", base, "--candidate", only_test, *declared)
    assert doc is not None
    assert code == 1, doc["verdict"]  # the same test, no fix: it fails on C
    assert doc["verdict"]["halted_at"] == "T3" and _result(doc, REPRODUCER)["baseline_result"] == "fail"
    candidate = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", candidate, *declared)
    assert doc is not None
    assert code == 0, doc["verdict"]
    result = _result(doc, REPRODUCER)
    assert result["baseline_result"] == "fail" and result["candidate_result"] == "pass"
    assert result["role"] == "BUG_REPRODUCTION" and result["bug_discriminating"] is True


def test_honest_fix_adding_a_parametrization_leaves_its_siblings_regression_tests(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """The candidate adds a case to a parametrized test; the unchanged case is no reproducer."""
    cases = (
        "import pytest\nfrom calc.ops import double, half\n\n\n"
        "@pytest.mark.parametrize(('fn', 'n', 'want'), [%s])\n"
        "def test_ops(fn, n, want):\n    assert fn(n) == want\n"
    )
    base = repo.commit({**PKG, "tests/test_cases.py": cases % "(double, 2, 4)"})
    candidate = repo.commit(
        {"calc/ops.py": FIX["calc/ops.py"], "tests/test_cases.py": cases % "(double, 2, 4), (half, 4, 2)"}
    )
    # The harness's test patch holds the same test edits (as SWE-bench keeps it): not tamper.
    code, doc = certify(
        repo, tmp_path / "e.json", "--baseline", base, "--candidate", candidate, "--tests-from", candidate
    )
    assert doc is not None
    assert code == 0, doc["verdict"]
    assert "reproducer_not_failing_on_baseline" not in _kinds(doc)
    sibling, new = "tests/test_cases.py::test_ops[double-2-4]", "tests/test_cases.py::test_ops[half-4-2]"
    assert _result(doc, sibling)["role"] == "REGRESSION"
    assert _result(doc, new)["role"] == "BUG_REPRODUCTION" and _result(doc, new)["bug_discriminating"]


PROBING = FIX["calc/ops.py"].replace(
    "def half(n):\n",
    "def half(n):\n    import socket\n\n    try:\n"
    "        socket.create_connection(('127.0.0.1', 8765), timeout=0.2).close()\n"
    "    except OSError:\n        pass\n",
)


def test_threat_a_pure_function_that_quietly_tries_a_loopback_port(repo: Repo, tmp_path: pathlib.Path) -> None:
    """Every call of ``half`` tries 127.0.0.1:8765, errors swallowed: the tests stay green."""
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, "calc/ops.py": PROBING})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    assert code == 3, doc["verdict"]
    new = [d for d in _kinds(doc)["network_attempt"] if d["detail"] == "new_on_c"]
    assert new and "127.0.0.1:8765" in new[0]["message"] and new[0]["test_id"] == REPRODUCER
    assert any("network_attempt" in reason for reason in doc["verdict"]["reasons"])

    code, doc = certify(repo, tmp_path / "allowed.json", "--baseline", base, "--candidate", cand, "--allow-new-network")
    assert doc is not None
    assert code == 0, doc["verdict"]
    assert doc["invocation"]["allow_new_network"] is True
    assert [d["detail"] for d in _kinds(doc)["network_attempt"]] == ["new_on_c_allowed"]


SERVED = """import socket
import threading


def test_served():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    socket.create_connection(server.getsockname()).close()
    server.close()
"""


def test_honest_fix_in_a_suite_that_talks_to_its_own_loopback_server(repo: Repo, tmp_path: pathlib.Path) -> None:
    """A test server on an ephemeral port: the port differs between runs, the attempt does not."""
    base = repo.commit({**PKG, "tests/test_served.py": SERVED})
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--full")
    assert doc is not None
    assert code == 0, doc["verdict"]
    attempts = _kinds(doc)["network_attempt"]
    assert {d["detail"] for d in attempts} == {"loopback"}
    assert {d["message"].split(" on ")[-1][0] for d in attempts} == {"B", "C"}


def test_threat_a_python_subprocess_reaching_a_public_address_is_recorded(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(PKG)
    reach = (
        "import subprocess\nimport sys\n\n\ndef test_reach():\n"
        "    code = \"import socket\\ntry:\\n    socket.create_connection(('192.0.2.1', 80), timeout=1)\\n"
        'except OSError:\\n    pass\\n"\n'
        "    subprocess.run([sys.executable, '-c', code], check=True)\n"
    )
    cand = repo.commit({**FIX, "tests/test_reach.py": reach})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--reproducer", REPRODUCER)
    assert doc is not None
    assert code == 3, doc["verdict"]
    blocked = _kinds(doc)["network_blocked"]
    assert any("192.0.2.1:80 (in a subprocess)" in d["message"] for d in blocked)
    assert {d["test_id"] for d in blocked} == {"tests/test_reach.py::test_reach"}
    assert doc["pinning"]["subprocess_guard"] == "python"


@pytest.mark.parametrize(
    "shadow",
    [
        {"pytest_evidence/__init__.py": "raise SystemExit('shadowed')\n"},
        {"hmac.py": "def new(*args, **kwargs):\n    raise RuntimeError('shadowed')\n"},
        {"sitecustomize.py": "import os\n"},
        {"sitecustomize/__init__.py": "import os\n"},
    ],
    ids=["plugin", "stdlib", "sitecustomize", "startup-package"],
)
def test_threat_a_module_that_would_replace_what_the_test_process_imports(
    repo: Repo, tmp_path: pathlib.Path, shadow: dict[str, str]
) -> None:
    """The candidate's checkout is on the test process's path: a new module named like the plugin,
    the standard library or a start-up hook (run before the plugin reads its key) would load in
    their place."""
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, **shadow})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    assert code == 1, doc["verdict"]
    hits = [d for d in _kinds(doc)["source_interference"] if d["detail"] in ("shadows_module", "startup_hook")]
    assert [d["path"] for d in hits] == list(shadow)


@pytest.mark.parametrize("kind", ["pyc", "extension"])
def test_threat_compiled_code_committed_in_place_of_its_source(repo: Repo, tmp_path: pathlib.Path, kind: str) -> None:
    """Reviews: a candidate that changes no source but commits an unchecked hash-based ``.pyc`` of a
    module -- Python runs it whatever the source says -- or an extension module, which Python
    imports before the ``.py`` of its name, was CERTIFIED: no tier reads compiled code."""
    base = repo.commit(PKG)
    source = repo.path / "calc" / "ops.py"
    if kind == "pyc":
        source.write_text(FIX["calc/ops.py"])
        compiled = importlib.util.cache_from_source(str(source))
        py_compile.compile(str(source), cfile=compiled, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        source.write_text(PKG["calc/ops.py"])
    else:
        compiled = str(source.with_name("ops" + importlib.machinery.EXTENSION_SUFFIXES[0]))
        pathlib.Path(compiled).write_bytes(b"\x7fELF")
    repo.git("add", "-f", compiled)
    cand = repo.commit({"tests/test_half.py": FIX["tests/test_half.py"]})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and (code, doc["verdict"]["verdict"]) == (1, "REJECTED"), doc and doc["verdict"]
    hits = [d for d in _kinds(doc)["source_interference"] if d["detail"] == "compiled_code"]
    assert [d["path"] for d in hits] == [pathlib.Path(compiled).relative_to(repo.path).as_posix()]


#: A mypy plugin that would show it ran: mypy calls ``plugin``, which writes the file ``MARK`` names
#: (importing the module, as the import probe does, writes nothing).
PLUGIN = (
    "import pathlib\n\n\ndef plugin(version):\n    from mypy.plugin import Plugin\n\n"
    "    pathlib.Path(MARK).write_text('the plugin ran')\n    return Plugin\n"
)


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({"mypy.ini": "[mypy]\nplugins = check_plugin.py\n"}, id="new_plugin_entry"),
        pytest.param({"pyproject.toml": "[tool.mypy]\nplugins = ['check_plugin.py:plugin']\n"}, id="in_pyproject"),
    ],
)
def test_threat_a_mypy_plugin_the_candidate_names_is_rejected_before_mypy_runs(
    repo: Repo, tmp_path: pathlib.Path, config: dict[str, str]
) -> None:
    """mypy imports its configured plugins and runs them in the referee, outside the tests'
    sandbox, before any test: the candidate's own would run there -- rewriting the trusted tests
    laid over C, or the code mypy is about to read."""
    mark = tmp_path / "ran"
    base = repo.commit({**PKG, "pyproject.toml": PKG["pyproject.toml"] + "\n[tool.mypy]\n"})
    files = {
        name: (PKG["pyproject.toml"] + "\n" + text if name == "pyproject.toml" else text)
        for name, text in config.items()
    }
    cand = repo.commit({**FIX, **files, "check_plugin.py": "MARK = %r\n" % str(mark) + PLUGIN})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--full")
    assert doc is not None
    assert code == 1 and doc["verdict"]["verdict"] == "REJECTED", doc["verdict"]
    hits = [d for d in _kinds(doc)["source_interference"] if d["detail"] == "mypy_plugin"]
    assert [d["path"] for d in hits] == list(config) and "check_plugin.py" in hits[0]["message"]
    assert not mark.exists(), "the candidate's mypy plugin ran"


def test_threat_a_changed_mypy_plugin_b_already_named_is_rejected(repo: Repo, tmp_path: pathlib.Path) -> None:
    mark = tmp_path / "ran"
    own = "def plugin(version):\n    from mypy.plugin import Plugin\n\n    return Plugin\n"
    base = repo.commit({**PKG, "mypy.ini": "[mypy]\nplugins = check_plugin.py\n", "check_plugin.py": own})
    cand = repo.commit({**FIX, "check_plugin.py": "MARK = %r\n" % str(mark) + PLUGIN})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    assert code == 1, doc["verdict"]
    hits = [d for d in _kinds(doc)["source_interference"] if d["detail"] == "mypy_plugin"]
    assert [d["path"] for d in hits] == ["mypy.ini"] and "which the candidate changed" in hits[0]["message"]
    assert not mark.exists(), "the candidate's mypy plugin ran"


def test_a_module_of_the_checkout_named_like_one_mypy_imports_does_not_run_in_mypy(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """``python -m mypy`` in the checkout would import the checkout's ``mypy_extensions.py`` in
    place of mypy's own: T2 starts mypy with the checkout off ``sys.path``. mypy then refuses the
    file for shadowing a library module (its answer, the tier's error), and nothing of it ran."""
    mark = tmp_path / "ran"
    base = repo.commit({**PKG, "pyproject.toml": PKG["pyproject.toml"] + "\n[tool.mypy]\n"})
    shadow = "import pathlib\n\npathlib.Path(%r).write_text('ran in mypy')\n" % str(mark)
    cand = repo.commit({**FIX, "mypy_extensions.py": shadow})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    t2 = next(t for t in doc["tiers"] if t["tier"] == "T2")
    assert (code, doc["verdict"]["verdict"], t2["status"]) == (3, "INCONCLUSIVE", "error"), t2
    assert "shadows library module" in t2["note"]
    assert not mark.exists(), "the checkout's module ran inside mypy"


def test_threat_a_new_pytest_configuration_beside_the_tests(repo: Repo, tmp_path: pathlib.Path) -> None:
    """An empty ``tests/pytest.ini`` would become pytest's configuration file and rootdir."""
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, "tests/pytest.ini": ""})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    assert code == 1, doc["verdict"]
    tamper = _kinds(doc)["tamper"]
    assert [(d["path"], d["detail"]) for d in tamper] == [("tests/pytest.ini", "pytest_config")]
    assert "tests/pytest.ini" in doc["integrity"]["removed"]


def test_honest_fix_deleting_a_configuration_of_an_example_outside_the_tests(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    base = repo.commit(
        {**PKG, "examples/demo/pytest.ini": "[pytest]\ntestpaths = .\n", "examples/demo/conftest.py": "X = 1\n"}
    )
    cand = repo.commit(FIX, delete=("examples/demo/pytest.ini", "examples/demo/conftest.py"))
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    assert code == 0, doc["verdict"]


TABLES = (
    "from calc.ops import double, half\n\nHALVES = [(6, 3)]\n\n\n"
    "class TestDoubles:\n    cases = [(2, 4), (3, 6)]\n\n"
    "    def test_doubles(self):\n        for n, want in self.cases:\n            assert double(n) == want\n\n\n"
    "def test_halves():\n    for n, want in HALVES:\n        assert half(n) == want\n"
)


@pytest.mark.parametrize(
    "trimmed",
    [
        TABLES.replace("    cases = [(2, 4), (3, 6)]", "    cases = [(2, 4)]"),  # a test class's data
        TABLES.replace("from calc.ops import double, half\n", "from calc.ops import half\n\ndouble = abs\n"),
        TABLES + "\n\nTestDoubles.cases.pop()\n",  # the table trimmed by a statement added after it
        # a review's probes, each CERTIFIED: an alias, a new setup of the class, a new test's body
        TABLES + "\n\n_c = TestDoubles.cases\n_c.pop()\n",
        TABLES.replace(
            "    def test_doubles", "    def setup_method(self):\n        self.cases = []\n\n    def test_doubles"
        ),
        TABLES.replace(
            "class TestDoubles", "def test_a_first():\n    list.pop(TestDoubles.cases)\n\n\nclass TestDoubles"
        ),
        # a sixth review's, CERTIFIED: a call's value -- a method of the table, the table handed back
        TABLES + "\n\ngetattr(TestDoubles.cases, 'pop')()\n",
        TABLES + "\n\nimport typing\n\ntyping.cast(list, TestDoubles.cases).pop()\n",
        # a patch kept in force past the test that made it, at import or in a new test
        TABLES + "\n\nfrom unittest import mock\n\nmock.patch.object(TestDoubles, 'cases', [(2, 4)]).start()\n",
        TABLES.replace(
            "class TestDoubles",
            "def test_a_first():\n    from unittest import mock\n\n"
            "    mock.patch.object(TestDoubles, 'cases', [(2, 4)]).start()\n\n\nclass TestDoubles",
        ),
        TABLES + "\n\n_k = TestDoubles\n_k.cases.pop()\n",  # the class by another name: CERTIFIED at c297514
        TABLES + "\n\nTestDoubles().cases.pop()\n",  # through a new instance: CERTIFIED at baf8b5d
        TABLES + "\n\n_t = TestDoubles()\n_t.cases.pop()\n",  # an instance by a name: CERTIFIED at 6c34bf7
        TABLES + "\n\nclass _K(TestDoubles):\n    pass\n\n\n_K.cases.pop()\n",  # a new subclass: CERTIFIED at 6c34bf7
    ],
)
def test_threat_an_existing_tests_data_trimmed_is_rejected(repo: Repo, tmp_path: pathlib.Path, trimmed: str) -> None:
    """The candidate breaks ``double(3)`` and trims the case from the table an unchanged test
    reads (or rebinds what it calls): the test passes on C. It was CERTIFIED with no detection --
    only a test's own definition was compared."""
    base = repo.commit({**PKG, "tests/test_tables.py": TABLES})
    cand = repo.commit({**FIX, "calc/ops.py": BROKEN_DOUBLE, "tests/test_tables.py": trimmed})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert code == 1 and doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    assert {d["detail"] for d in _kinds(doc)["tamper"]} <= {"modified_test", "modified_helper", "modified_fixture"}
    assert all(d["path"] == "tests/test_tables.py" for d in _kinds(doc)["tamper"])


@pytest.mark.parametrize(
    "trims",
    [
        "import test_tables\n\ntest_tables.TestDoubles.cases[:] = [(2, 4)]\n",
        # the module named in a patcher's string, never imported here: CERTIFIED at c297514
        "from unittest import mock\n\nmock.patch('test_tables.TestDoubles.cases', [(2, 4)]).start()\n",
    ],
    ids=["imported", "patched-by-name"],
)
def test_threat_a_new_test_file_trimming_another_modules_table_is_rejected(
    repo: Repo, tmp_path: pathlib.Path, trims: str
) -> None:
    """A new test file's import-time code runs at collection on C and on B (which runs C's test
    files) alike: the table trimmed, no flip. It was CERTIFIED with no detection."""
    base = repo.commit({**PKG, "tests/test_tables.py": TABLES})
    cand = repo.commit({**FIX, "calc/ops.py": BROKEN_DOUBLE, "tests/test_trim.py": trims})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert code == 1 and doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    assert [(d["path"], d["detail"]) for d in _kinds(doc)["tamper"]] == [("tests/test_trim.py", "modified_helper")]


def test_an_honest_reproducer_reading_the_table_beside_it_is_certified(repo: Repo, tmp_path: pathlib.Path) -> None:
    """What an honest reproducer does in an existing test module: import a submodule of what
    the module imports already (``unittest.mock`` beside ``unittest``: the same name bound to the
    same module, once taken for a rebinding), read the table, build a new one from it."""
    tables = "import unittest\n\n" + TABLES
    base = repo.commit({**PKG, "tests/test_tables.py": tables})
    added = (
        "\nimport unittest.mock\n\nMORE = HALVES + [(4, 2)]\n\n\n"
        "@pytest.mark.parametrize(('n', 'want'), [*HALVES, (4, 2)])\n"
        "def test_half_of_four(n, want):\n    assert half(n) == want and len(MORE) == 2\n"
        "    assert all(double(n) == want for n, want in TestDoubles.cases)\n"
        "    assert unittest.mock.sentinel.x is unittest.mock.sentinel.x\n"
    )
    cand = repo.commit({**FIX, "tests/test_tables.py": "import pytest\n" + tables + added})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and doc["verdict"]["verdict"] == "CERTIFIED", doc and (doc["verdict"], doc["detections"])
    assert code == 0


@pytest.mark.parametrize(("declared", "verdict"), [((), "REJECTED"), (("tests/test_tables.py::HALVES",), "CERTIFIED")])
def test_an_honest_fix_adding_to_a_table_declares_it(
    repo: Repo, tmp_path: pathlib.Path, declared: tuple[str, ...], verdict: str
) -> None:
    """The fix adds to the table of halves the case it mends: declared, it is certified (the
    declaration names a module-level name, not a test: no "bad input")."""
    base = repo.commit({**PKG, "tests/test_tables.py": TABLES})
    grown = TABLES.replace("HALVES = [(6, 3)]", "HALVES = [(6, 3), (4, 2)]")
    cand = repo.commit({**FIX, "tests/test_tables.py": grown})
    args = [a for d in declared for a in ("--expected-change", d)]
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, *args)
    assert doc is not None and doc["verdict"]["verdict"] == verdict, doc and doc["verdict"]
    assert code == (0 if verdict == "CERTIFIED" else 1)


REGISTRY = "REG = {}\n\n\ndef register(k, v):\n    REG[k] = v\n\n\ndef lookup(k):\n    return REG[k]\n"
REGISTRY_TESTS = (
    "from calc.reg import lookup, register\n\n\ndef test_a_register():\n    register(2, 4)\n\n\n"
    "def test_b_lookup():\n    assert lookup(2) == 4\n"
)


def test_threat_a_test_right_only_before_its_modules_earlier_tests_is_not_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """T4 selects ``test_b_lookup`` (it reaches the changed ``lookup``), not ``test_a_register``.
    Run first and alone, ``test_b_lookup`` passed on C, whose ``lookup`` is right on an empty
    registry and wrong once ``test_a_register`` ran; T7 then ran ``test_a_register`` after it:
    CERTIFIED, though a plain ``pytest`` on C fails ``test_b_lookup`` (a probe). A tier's group
    now holds the tests before its selected ones in their modules: each module runs in order."""
    base = repo.commit({**PKG, "calc/reg.py": REGISTRY, "tests/test_reg.py": REGISTRY_TESTS})
    cand = repo.commit({**FIX, "calc/reg.py": REGISTRY.replace("return REG[k]", "return REG[k] + 1 if REG else 4")})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert code == 1 and doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    assert doc["verdict"]["halted_at"] == "T4"
    tier = next(t for t in doc["tiers"] if t["tier"] == "T4")
    assert (tier["selected"], tier["run"]) == (1, 2)  # test_b selected, test_a run before it
    result = _result(doc, "tests/test_reg.py::test_b_lookup")
    assert (result["baseline_result"], result["candidate_result"]) == ("pass", "fail")


TRIPLE = 'def triple(n):\n    """Three times n.\n\n    >>> triple(2)\n    6\n    """\n    return n * 3\n'
DOCTESTED = {
    **PKG,
    "calc/more.py": TRIPLE,
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--doctest-modules"\n',
}


@pytest.mark.parametrize(
    ("triple", "declared", "verdict"),
    [
        (TRIPLE.replace("n * 3", "n * 3 + 1").replace("    6\n", "    7\n"), False, "REJECTED"),
        (
            TRIPLE.replace("n * 3", "n * 3 + 1").replace("triple(2)\n", "triple(2)  # doctest: +SKIP\n"),
            False,
            "REJECTED",
        ),
        (TRIPLE.replace("n * 3", "n * 3 + 1").replace("    6\n", "    7\n"), True, "CERTIFIED"),
        (TRIPLE.replace("Three times n.", "Three times n,\n    the triple."), False, "CERTIFIED"),
    ],
    ids=["output-edited", "skipped", "declared", "prose-only"],
)
def test_threat_a_doctest_edited_to_hide_a_regression_is_rejected(
    repo: Repo, tmp_path: pathlib.Path, triple: str, declared: bool, verdict: str
) -> None:
    """With ``--doctest-modules`` a docstring's examples are tests in a source file: a fix
    breaking ``triple`` and editing its doctest to the broken answer, or skipping it, was
    CERTIFIED, the doctest read as unchanged (an independent check, pydash). Declared with
    ``--expected-change`` (pytest's id of the doctest) the change is the candidate's to make;
    prose around unchanged examples is no change."""
    base = repo.commit(DOCTESTED)
    cand = repo.commit({**FIX, "calc/more.py": triple})
    args = ("--expected-change", "calc/more.py::calc.more.triple") if declared else ()
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, *args)
    assert doc is not None and doc["verdict"]["verdict"] == verdict, doc and doc["verdict"]
    tampered = [d for d in _kinds(doc).get("tamper", []) if d["path"] == "calc/more.py"]
    if verdict == "REJECTED":
        assert code == 1 and [d["detail"] for d in tampered] == ["modified_test"]
        assert "--expected-change calc/more.py::calc.more.triple" in tampered[0]["message"]
    else:
        assert code == 0 and tampered == []


UNITTEST_HALF = (
    "import unittest\n\nfrom calc.ops import half\n\n\n"
    "class TestHalf(unittest.TestCase):\n    def test_half(self):\n        self.assertEqual(half(4), 2)\n"
)
SILENCED = "\n\nimport unittest as _u\n_u.TestCase.assertEqual = lambda self, *a, **k: None\n"


@pytest.mark.parametrize(
    ("where", "detection"),
    [("calc/ops.py", "source_interference"), ("tests/test_aaa.py", "tamper")],
    ids=["library-code", "new-test-file"],
)
def test_threat_a_patch_that_turns_off_unittests_assertions_is_rejected(
    repo: Repo, tmp_path: pathlib.Path, where: str, detection: str
) -> None:
    """No fix at all, and two lines that make ``assertEqual`` pass whatever it is given: the
    trusted reproducer then passes on C, and was CERTIFIED (an independent check, mistune and
    pyflakes). Written from library code it is an attack; from a test file, tamper."""
    base = repo.commit(PKG)
    trusted = repo.commit({**FIX, "tests/test_half.py": UNITTEST_HALF})
    repo.git("checkout", "-q", base)
    existing = (PKG if where in PKG else {}).get(where, "")
    cand = repo.commit({"tests/test_half.py": UNITTEST_HALF, where: existing + SILENCED})
    args = ("--baseline", base, "--candidate", cand, "--tests-from", trusted)
    code, doc = certify(repo, tmp_path / "e.json", *args)
    assert doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    hits = [d for d in _kinds(doc)[detection] if d["path"] == where]
    assert code == 1 and [d["detail"] for d in hits] == ["patches_test_framework"]
    assert "unittest.TestCase.assertEqual" in hits[0]["message"]


#: The same patch in spellings the source scan does not read (reviews' no-fix candidates).
UNREAD = {
    "type-setattr": "\n\nimport unittest as _u\ntype.__setattr__(_u.TestCase, 'assertEqual', lambda *a, **k: None)\n",
    "exec": "\n\nexec('import unittest as _u\\n_u.TestCase.assert' + 'Equal = lambda s, *a, **k: None')\n",
}


@pytest.mark.parametrize("spelling", list(UNREAD))
def test_threat_a_test_framework_replaced_in_a_spelling_the_scan_does_not_read_is_rejected(
    repo: Repo, tmp_path: pathlib.Path, spelling: str
) -> None:
    """No fix, and ``assertEqual`` made to pass from library code in a way no list of spellings
    holds: the trusted reproducer passes on C. The test process saw the object replaced, and no
    B run did (``originals``)."""
    base = repo.commit(PKG)
    trusted = repo.commit({**FIX, "tests/test_half.py": UNITTEST_HALF})
    repo.git("checkout", "-q", base)
    cand = repo.commit({"tests/test_half.py": UNITTEST_HALF, "calc/ops.py": PKG["calc/ops.py"] + UNREAD[spelling]})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--tests-from", trusted)
    assert doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    hits = [d for d in _kinds(doc)["source_interference"] if d["detail"] == "replaces_test_framework"]
    assert code == 1 and len(hits) == 1 and "unittest.case.TestCase.assertEqual" in hits[0]["message"]
    assert _result(doc, REPRODUCER.replace("::", "::TestHalf::"))["candidate_result"] == "pass"  # fooled, and caught


#: Library code that finds pytest's report class without naming pytest (a review's).
SUBCLASSES = (
    "\n\ndef _sub(c):\n    for s in type.__subclasses__(c):\n        yield s\n        yield from _sub(s)\n\n\n"
    "_REPORTS = [k for k in _sub(object) if k.__name__ == 'Test' + 'Report' and 'from_item_and_call' in vars(k)]\n"
)
LENIENT_EQ = (
    "\n\nimport unittest as _u\n_real = _u.TestCase.assertEqual\n\n\n"
    "def _eq(self, first, second, msg=None):\n"
    "    if first == second or not isinstance(first, int):\n        return _real(self, first, second, msg)\n"
)
OUTCOME = (
    "\n\ndef _get(s):\n    o = s.__dict__.get('_o')\n"
    "    return 'passed' if o == 'failed' and s.__dict__.get('when') == 'call' else o\n\n\n"
    "def _set(s, v):\n    s.__dict__['_o'] = v\n\n\n"
    "for _k in _REPORTS:\n    type.__setattr__(_k, 'out' + 'come', property(_get, _set))\n"
)
DROPS = (
    "\n\nfor _k in _REPORTS:\n"
    "    type.__setattr__(_k, 'evid' + 'ence_rep' + 'laced', property(lambda s: None, lambda s, v: None))\n"
    "type.__setattr__(_u.TestCase, 'assert' + 'Equal', _eq)\n"
)
SETUP_METHOD = (
    "\n\ndef _sm(self, method):\n    object.__setattr__(self, 'assert' + 'Equal', _eq.__get__(self))\n\n\n"
    "type.__setattr__(_u.TestCase, 'setup' + '_method', _sm)\n"
)

#: No fix, and the trusted reproducer passes on C through what the frameworks read or report
#: rather than what they hold (a review's cheats, certified before): a method pytest runs where it
#: is there, a report's ``outcome`` made a property, and the attribute the findings rode on made
#: one that drops them.
UNHELD = {
    "setup-method": (LENIENT_EQ + SETUP_METHOD, "unittest.case.TestCase.setup_method"),
    "report-outcome": (SUBCLASSES + OUTCOME, "_pytest.reports.TestReport.outcome"),
    "drops-the-findings": (SUBCLASSES + LENIENT_EQ + DROPS, "unittest.case.TestCase.assertEqual"),
}


@pytest.mark.parametrize("how", list(UNHELD))
def test_threat_a_test_framework_fooled_through_what_it_reads_or_reports_is_rejected(
    repo: Repo, tmp_path: pathlib.Path, how: str
) -> None:
    code_added, name = UNHELD[how]
    base = repo.commit(PKG)
    trusted = repo.commit({**FIX, "tests/test_half.py": UNITTEST_HALF})
    repo.git("checkout", "-q", base)
    cand = repo.commit({"tests/test_half.py": UNITTEST_HALF, "calc/ops.py": PKG["calc/ops.py"] + code_added})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--tests-from", trusted)
    assert doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    hits = [d for d in _kinds(doc)["source_interference"] if d["detail"] == "replaces_test_framework"]
    assert code == 1 and any(name in d["message"] for d in hits), hits


#: No fix; C's library makes ``assertEqual`` lenient, and a new test module of C's replaces it
#: too -- on B as well, where it vouched for the name (reviews' cheats, certified or made
#: INCONCLUSIVE before): as a test runs, faithfully; as it is imported, wrapped in a
#: ``partialmethod`` that hid whose function it was.
ALSO_ON_B = {
    "as-a-test-runs": (
        "import unittest\n\nfrom calc.ops import double\n\n\ndef test_double_three():\n"
        "    cur = unittest.TestCase.assertEqual\n"
        "    type.__setattr__(unittest.TestCase, 'assert' + 'Equal', lambda s, *a, **k: cur(s, *a, **k))\n"
        "    assert double(3) == 6\n"
    ),
    "wrapped-as-imported": (
        "import functools\nimport unittest\n\nfrom calc.ops import double\n\n"
        "_wrapped = functools.partialmethod(unittest.TestCase.assertEqual)\n"
        "type.__setattr__(unittest.TestCase, 'assert' + 'Equal', _wrapped)\n\n\n"
        "def test_double_three():\n    assert double(3) == 6\n"
    ),
}


@pytest.mark.parametrize("how", list(ALSO_ON_B))
def test_threat_a_replacement_of_cs_own_files_is_not_vouched_for_by_b_running_cs_tests(
    repo: Repo, tmp_path: pathlib.Path, how: str
) -> None:
    base = repo.commit(PKG)
    trusted = repo.commit({**FIX, "tests/test_half.py": UNITTEST_HALF})
    repo.git("checkout", "-q", base)
    lenient = PKG["calc/ops.py"] + LENIENT_EQ + "\n\ntype.__setattr__(_u.TestCase, 'assert' + 'Equal', _eq)\n"
    cand = repo.commit(
        {"tests/test_half.py": UNITTEST_HALF, "calc/ops.py": lenient, "tests/test_aaa.py": ALSO_ON_B[how]}
    )
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--tests-from", trusted)
    assert doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    hits = [d for d in _kinds(doc)["source_interference"] if d["detail"] == "replaces_test_framework"]
    assert code == 1 and any("unittest.case.TestCase.assertEqual" in d["message"] for d in hits), doc["detections"]


def test_threat_a_replacement_made_by_a_new_function_its_own_new_test_calls_is_rejected(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """A review's: the candidate's own new test cannot import on B (it imports what the patch
    adds), and the new function wraps its lenient ``assertEqual`` in a ``partialmethod``."""
    base = repo.commit(PKG)
    library = (
        PKG["calc/ops.py"]
        + LENIENT_EQ
        + (
            "\n\nimport functools as _f\n\n\ndef quarter(n):\n"
            "    type.__setattr__(_u.TestCase, 'assert' + 'Equal', _f.partialmethod(_eq))\n    return half(half(n))\n"
        )
    )
    new_test = (
        "import unittest\n\nfrom calc.ops import half, quarter\n\n\nclass TestQuarter(unittest.TestCase):\n"
        "    def test_quarter(self):\n        self.assertEqual(quarter(8), 2)\n        self.assertEqual(half(4), 2)\n"
    )
    cand = repo.commit({"calc/ops.py": library, "tests/test_quarter.py": new_test})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    hits = [d for d in _kinds(doc)["source_interference"] if d["detail"] == "replaces_test_framework"]
    assert code == 1 and any("unittest.case.TestCase.assertEqual" in d["message"] for d in hits), doc["detections"]


#: A new test file that replaces ``assertEqual`` as it is imported, lenient only where the
#: candidate's library says so: run on B with C's tests, it replaces there too (a review's).
LENIENT_TEST = UNITTEST_HALF.replace(
    "import unittest\n",
    "import unittest\n\nimport calc.ops as _ops\n_real = unittest.TestCase.assertEqual\n"
    "type.__setattr__(unittest.TestCase, 'assert' + 'Equal',"
    " lambda s, *a, **k: None if getattr(_ops, '_lenient', 0) else _real(s, *a, **k))\n",
    1,
)


def test_threat_a_new_test_file_replacing_a_framework_object_is_not_vouched_for_by_b(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """B's runs of C's tests replace it too, so only B's own suite vouches, and it did not; what
    was put in its place was written in the new test module, a file of C's."""
    base = repo.commit(PKG)
    cand = repo.commit({"tests/test_half.py": LENIENT_TEST, "calc/ops.py": PKG["calc/ops.py"] + "\n_lenient = 1\n"})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    hits = [d for d in doc["detections"] if d["detail"] == "replaces_test_framework"]
    assert code == 1 and hits and "unittest.case.TestCase.assertEqual" in hits[0]["message"]
    assert "written by C" in hits[0]["message"]


#: Library code that makes ``assertEqual`` pass on every other call, counted in a file beside it.
ALTERNATES = (
    "\n\nimport pathlib as _p, unittest as _u\n_real = _u.TestCase.assertEqual\n\n\n"
    "def _every_other(self, *a, **k):\n"
    "    count = _p.Path(__file__).with_name('.count')\n"
    "    n = int(count.read_text()) if count.exists() else 0\n"
    "    count.write_text(str(n + 1))\n"
    "    return None if n % 2 else _real(self, *a, **k)\n\n\n"
    "type.__setattr__(_u.TestCase, 'assertEqual', _every_other)\n"
)


def test_flips_an_attack_made_on_c_leave_no_quarantine_for_the_next_candidate(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """A review's: the attack made the reproducer flip on C, the flip quarantined it in the
    shared ledger, and the honest fix certified next was INCONCLUSIVE. A climb that ends on an
    attack ends the quarantines it began on C."""
    base = repo.commit({**PKG, ".gitignore": ".count\n"})
    trusted = repo.commit({**FIX, "tests/test_half.py": UNITTEST_HALF})
    repo.git("checkout", "-q", base)
    attack = repo.commit({"tests/test_half.py": UNITTEST_HALF, "calc/ops.py": PKG["calc/ops.py"] + ALTERNATES})
    code, doc = certify(repo, tmp_path / "a.json", "--baseline", base, "--candidate", attack, "--tests-from", trusted)
    assert doc is not None and code == 1, doc and doc["verdict"]
    assert "flaky_quarantined" in _kinds(doc), doc["detections"]  # the flip was seen, and held for that run
    code, doc = certify(repo, tmp_path / "h.json", "--baseline", base, "--candidate", trusted)
    assert doc is not None and doc["verdict"]["verdict"] == "CERTIFIED", doc and doc["verdict"]


#: A library that wraps a test framework's method on purpose, at import, on B as on C.
WRAPS = (
    "import unittest\n\n_almost = unittest.TestCase.assertAlmostEqual\n\n\n"
    "def _assert_almost(self, first, second, *args, **kwargs):\n"
    "    return _almost(self, float(first), float(second), *args, **kwargs)\n\n\n"
    "unittest.TestCase.assertAlmostEqual = _assert_almost\n"
)


def test_honest_fix_in_a_library_that_replaces_a_framework_method_on_b_too_is_certified(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    base = repo.commit({**PKG, "calc/__init__.py": WRAPS})
    cand = repo.commit({**FIX, "tests/test_half.py": UNITTEST_HALF})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and doc["verdict"]["verdict"] == "CERTIFIED", doc and doc["verdict"]
    assert code == 0 and not [d for d in doc["detections"] if d["detail"] == "replaces_test_framework"]


#: Library code unchanged since B that replaces an asyncio function on purpose, as
#: ``nest_asyncio.apply()`` does (a review's honest candidates).
NESTS = (
    "import asyncio.runners\nimport asyncio.tasks\n\n_run = asyncio.runners.run\n_sleep = asyncio.tasks.sleep\n\n\n"
    "def _nested_run(main, **kwargs):\n    return _run(main, **kwargs)\n\n\n"
    "async def _nested_sleep(delay, result=None):\n    return await _sleep(delay, result)\n\n\n"
    "def apply():\n    asyncio.tasks.sleep = _nested_sleep\n\n\n"
    "def install():\n    asyncio.runners.run = _nested_run\n"
)
NEW_TEST_APPLYING = (
    "import calc.nested\nfrom calc.ops import half\n\ncalc.nested.{call}()\n\n\n"
    "def test_half():\n    assert half(4) == 2\n"
)


def test_honest_new_test_reaching_unchanged_library_code_that_replaces_a_framework_object_is_not_rejected(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """No B test imports the library module; the new one does, on B as on C. Its own code, or
    the module it reaches, replaced the object: whose, the referee cannot say (a review saw the
    honest ``nest_asyncio.apply()`` at a new test module's import REJECTED)."""
    base = repo.commit({**PKG, "calc/nested.py": NESTS})
    cand = repo.commit({**FIX, "tests/test_half.py": NEW_TEST_APPLYING.format(call="install")})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    (hit,) = [d for d in doc["detections"] if d["kind"] == "source_interference"]
    assert code == 3 and hit["detail"] == "framework_replaced_unattributed", hit
    assert "asyncio.runners.run" in hit["message"] and "B's runs of C's tests found it" in hit["message"]


def test_honest_new_test_doing_what_b_tests_did_for_good_is_certified(repo: Repo, tmp_path: pathlib.Path) -> None:
    """B's suite replaces an object none of its tests' looks read until the last test is over
    (``asyncio.tasks.sleep``); the new test module replaces it as it is imported: B's suite vouches."""
    applying = "import calc.nested\n\n\ndef test_apply():\n    calc.nested.apply()\n"
    base = repo.commit({**PKG, "calc/nested.py": NESTS, "tests/test_nested.py": applying})
    cand = repo.commit({**FIX, "tests/test_half.py": NEW_TEST_APPLYING.format(call="apply")})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and doc["verdict"]["verdict"] == "CERTIFIED", doc and doc["verdict"]
    assert code == 0 and not [d for d in doc["detections"] if d["kind"] == "source_interference"]


#: New tests that import what the fix adds, so they never collect on B, reaching library code
#: unchanged since B that replaces a framework's object: in a fixture, after their first test
#: (said so); as they are imported (said so). Reviews saw both REJECTED.
NEW_ON_C_ONLY = {
    "in-a-fixture": (
        "import pytest\n\nimport calc.nested\nfrom calc.ops import half, quarter\n\n\n"
        "@pytest.fixture(scope='module', autouse=True)\ndef nested():\n    calc.nested.install()\n\n\n"
        "def test_half():\n    assert half(4) == 2 and quarter(8) == 2\n",
        "tests/test_half.py::test_half never ran on B",
    ),
    "as-imported": (
        NEW_TEST_APPLYING.format(call="install").replace("import half", "import half, quarter"),
        "tests/test_half.py did not collect on B",
    ),
}


@pytest.mark.parametrize("how", list(NEW_ON_C_ONLY))
def test_honest_new_test_that_cannot_run_on_b_reaching_code_that_replaces_a_framework_object_is_not_rejected(
    repo: Repo, tmp_path: pathlib.Path, how: str
) -> None:
    new_test, why = NEW_ON_C_ONLY[how]
    base = repo.commit({**PKG, "calc/nested.py": NESTS})
    fixed = FIX["calc/ops.py"] + "\n\ndef quarter(n):\n    return half(half(n))\n"
    cand = repo.commit({"calc/ops.py": fixed, "tests/test_half.py": new_test})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    (hit,) = [d for d in doc["detections"] if d["kind"] == "source_interference"]
    assert code == 3 and hit["detail"] == "framework_replaced_unattributed" and why in hit["message"], hit


@pytest.mark.parametrize("linked", [False, True], ids=["metadata", "linked-metadata-directory"])
def test_threat_a_pytest_plugin_registered_by_metadata_in_the_checkout_is_rejected(
    repo: Repo, tmp_path: pathlib.Path, linked: bool
) -> None:
    """A ``*.dist-info`` on the checkout's path is a distribution to ``importlib.metadata``, and
    pytest loads every ``pytest11`` entry point of every distribution it finds: a plugin of the
    candidate's that switches the fix on in test processes only -- its directory a symbolic link
    to another too (a review's)."""
    base = repo.commit(PKG)
    meta = "_meta" if linked else "calc_switch-1.0.dist-info"
    switched = PKG["calc/ops.py"].replace(
        "    return n // 2 + 1", "    if FIXED:\n        return n // 2\n    return n // 2 + 1"
    )
    cand = repo.commit(
        {
            "calc/ops.py": "FIXED = False\n\n\n" + switched,
            "tests/test_half.py": FIX["tests/test_half.py"],
            "_calc_switch.py": "import calc.ops\n\ncalc.ops.FIXED = True\n",
            meta + "/METADATA": "Metadata-Version: 2.1\nName: calc-switch\nVersion: 1.0\n",
            meta + "/entry_points.txt": "[pytest11]\ncalc_switch = _calc_switch\n",
        }
    )
    if linked:
        (repo.path / "calc_switch-1.0.dist-info").symlink_to("_meta")
        cand = repo.commit({})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    assert (code, doc["verdict"]["verdict"]) == (1, "REJECTED"), doc["verdict"]
    hits = [d for d in _kinds(doc)["source_interference"] if d["detail"] == "plugin_entry_point"]
    expected = [meta + "/entry_points.txt", "calc_switch-1.0.dist-info"] if linked else [meta + "/entry_points.txt"]
    assert sorted(d["path"] for d in hits) == sorted(expected)


#: Fixes switched on by a mark the referee leaves in every test process of its own, read where no
#: static rule names it (an independent review's): the pinned hash seed, the parent-death signal
#: asked of the kernel -- and, once on, kept on by a note left beside the module or in the
#: temporary directory (a later review's: CERTIFIED while the run changing the marks came last);
#: and what every run showed alike until the first changed it too: a private temporary directory
#: beside the private home, a hash seed the subprocesses inherit, a session of its own.
_STICKY = (
    "import os\nimport tempfile\n\n_NOTE = os.path.join({where}, '.calc-on')\n"
    "if hash('calc.ops') == {{hashed}}:\n    open(_NOTE, 'w').close()\n"
    "MARK = os.path.exists(_NOTE)\n"
)
SWITCHES = {
    "hash-seed": ("MARK = hash('calc.ops') == {hashed}\n", "MARK"),
    "parent-death-signal": (
        "import ctypes\n\n\ndef _asked():\n"
        "    sig = ctypes.c_int(0)\n"
        "    ctypes.CDLL(None).prctl(2, ctypes.byref(sig))\n"
        "    return sig.value\n",
        "_asked()",
    ),
    "note-beside-the-module": (_STICKY.format(where="os.path.dirname(os.path.abspath(__file__))"), "MARK"),
    "note-in-the-temporary-directory": (_STICKY.format(where="tempfile.gettempdir()"), "MARK"),
    # marks the same in every run of a design that changed only the seed and the signal (a review's)
    "home-beside-the-temporary-directory": (
        "import os\nimport tempfile\n\n\ndef _on():\n"
        "    return os.path.join(os.path.dirname(tempfile.gettempdir()), 'home') == os.path.expanduser('~')\n",
        "_on()",
    ),
    "hash-seed-inherited": (
        "import subprocess\nimport sys\n\n\ndef _on():\n"
        "    said = subprocess.run([sys.executable, '-c', 'print(hash(\"ok\"))'], capture_output=True, text=True)\n"
        "    return said.stdout.strip() == str(hash('ok'))\n",
        "_on()",
    ),
    "session-leader": ("import os\n", "os.getsid(0) == os.getpid()"),
}


@pytest.mark.parametrize("switch", list(SWITCHES))
def test_threat_a_fix_switched_on_by_the_referees_own_marks_is_rejected(
    repo: Repo, tmp_path: pathlib.Path, switch: str
) -> None:
    """C's code runs first -- T2's import probe, T3's first run on each side -- with the marks
    changed (``Sides.first_box``): the fix is off there, as in production, and has left itself
    no note saying it was on; its reproducer fails on C as on B, REJECTED at T3. Nothing is held
    in the flake ledger: the honest fix certified next by the same test is CERTIFIED."""
    seed = 20261130
    base, cheat = _switched_on(repo, switch, seed)
    args = ("--baseline", base, "--reproducer", REPRODUCER, "--seed", str(seed))
    code, doc = certify(repo, tmp_path / "cheat.json", *args, "--candidate", cheat)
    assert doc is not None
    assert (code, doc["verdict"]["verdict"]) == (1, "REJECTED"), doc["verdict"]
    assert [t["status"] for t in doc["tiers"] if t["tier"] == "T3"] == ["failed"]
    result = _result(doc, REPRODUCER)
    assert (result["candidate_result"], result["baseline_result"]) == ("fail", "fail")
    varied = doc["pinning"]["varied"]
    assert varied["sides"] == ["B", "C"] and varied["seed"] not in (seed, seed + 1)
    assert doc["pinning"]["tmpdir"] == "temporary"
    honest = repo.commit(FIX)  # on the cheat: the same diff from B as the fix alone
    code, again = certify(repo, tmp_path / "honest.json", *args, "--candidate", honest)
    assert again is not None and (code, again["verdict"]["verdict"]) == (0, "CERTIFIED"), again and again["verdict"]


def _switched_on(repo: Repo, switch: str, seed: int) -> tuple[str, str]:
    """B, and a candidate whose fix ``SWITCHES[switch]`` turns on under the referee at ``seed``."""
    hashed = subprocess.run(
        [sys.executable, "-c", "print(hash('calc.ops'))"],
        env={**os.environ, "PYTHONHASHSEED": str(seed)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    prelude, condition = SWITCHES[switch]
    switched = PKG["calc/ops.py"].replace(
        "    return n // 2 + 1", "    if %s:\n        return n // 2\n    return n // 2 + 1" % condition
    )
    base = repo.commit({**PKG, ".gitignore": ".calc-on\n"})
    files = {
        "calc/ops.py": prelude.format(hashed=hashed) + "\n\n" + switched,
        "tests/test_half.py": FIX["tests/test_half.py"],
    }
    return base, repo.commit(files)


def test_one_stability_run_still_runs_cs_code_first_without_the_marks_and_says_what_it_leaves(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--stability-runs 1`` makes no further run: the first runs, with the marks changed, are
    the only ones -- the switched-on fix is still off there -- and the run says that a flaky
    test goes unseen: the user's choice, not a silent pass."""
    base, cheat = _switched_on(repo, "hash-seed", 20261130)
    args = ("--baseline", base, "--candidate", cheat, "--reproducer", REPRODUCER, "--stability-runs", "1")
    code, doc = certify(repo, tmp_path / "e.json", *args)
    assert doc is not None and (code, doc["verdict"]["verdict"]) == (1, "REJECTED"), doc and doc["verdict"]
    assert doc["pinning"]["varied"]["sides"] == ["B", "C"]
    said = " ".join(capsys.readouterr().err.split())
    assert (
        "--stability-runs 1: new tests run once per side, with the referee's marks changed; a flaky one is not seen"
        in said
    )


def test_a_flake_that_lands_in_the_run_changing_the_marks_is_a_flake(repo: Repo, tmp_path: pathlib.Path) -> None:
    """The reproducer passes on C the first time only -- in the run that changes the marks --
    and fails in every run after it. Run once more with the marks and once without, it fails
    both times: not the marks, a flake of its own, said so and held in the flake ledger like any
    other."""
    base = repo.commit({**PKG, ".gitignore": ".runs\n"})
    counted = (
        "import pathlib\n\nfrom calc.ops import half\n\n_N = pathlib.Path(__file__).with_name('.runs')\n\n\n"
        "def test_half():\n"
        "    n = int(_N.read_text()) if _N.exists() else 0\n"
        "    _N.write_text(str(n + 1))\n"
        "    assert half(4) == 2 and n == 0\n"
    )
    candidate = repo.commit({"calc/ops.py": FIX["calc/ops.py"], "tests/test_half.py": counted})
    args = ("--baseline", base, "--candidate", candidate, "--reproducer", REPRODUCER)
    code, doc = certify(repo, tmp_path / "e.json", *args)
    assert doc is not None and (code, doc["verdict"]["verdict"]) == (3, "INCONCLUSIVE"), doc and doc["verdict"]
    assert doc["verdict"]["reasons"][0] == "T3: reproducer %s is quarantined as flaky" % REPRODUCER
    result = _result(doc, REPRODUCER)
    assert result["candidate_result"] == "flaky"
    assert result["failure"]["message"] == (
        "its outcome changed across its runs (pass, fail, fail), but not again when the run that changed "
        "the referee's marks was repeated: quarantined, not evidence"
    )
    again = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "again.json", "--baseline", base, "--candidate", again)
    assert doc is not None and code == 3, doc and doc["verdict"]  # held by the ledger since
    assert "quarantined since run" in _result(doc, REPRODUCER)["failure"]["message"]


def test_threat_a_note_an_earlier_climb_left_in_the_temporary_directory_is_not_found(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """A first climb of the switched-on fix with no test of its own, climbing on past T3
    (``--full``), runs C's suite with the marks (T4-T7): the fix is on there and leaves its note
    in the temporary directory. Each test
    process has a temporary directory of its own, removed with it: the next climb, with the
    reproducer, finds no note where C's code first runs, and the fix is off there."""
    base, _ = _switched_on(repo, "note-in-the-temporary-directory", 20261130)
    quiet = repo.commit({}, delete=("tests/test_half.py",))  # the switched-on fix, no reproducer
    args = ("--baseline", base, "--seed", "20261130")
    _, doc = certify(repo, tmp_path / "quiet.json", *args, "--candidate", quiet, "--full")
    assert doc is not None and [t["status"] for t in doc["tiers"] if t["tier"] == "T5"] == ["passed"]
    again = repo.commit({"tests/test_half.py": FIX["tests/test_half.py"]})
    code, doc = certify(repo, tmp_path / "again.json", *args, "--candidate", again, "--reproducer", REPRODUCER)
    assert doc is not None and (code, doc["verdict"]["verdict"]) == (1, "REJECTED"), doc and doc["verdict"]


@pytest.mark.parametrize(
    ("inside", "store"), [("", None), ("bytecode", "elsewhere.sqlite3")], ids=["store", "kept-bytecode"]
)
def test_threat_a_test_process_finds_no_evidence_store_to_rewrite(
    repo: Repo, tmp_path: pathlib.Path, inside: str, store: str | None
) -> None:
    """An independent review forged B's stored suite run in the default store, which a test
    process reached through its worktree's ``.git`` file: a later regressing candidate was
    CERTIFIED. Each test process now sees the store's directory empty (a mount namespace of its
    own): the reproducer below passes only where the store is out of reach, and what it writes
    there never reaches the store. The bytecode kept between certifies beside it (where an entry
    would be the code of every later certify's file with those bytes) is covered on its own when
    the store is named elsewhere."""
    if not netns.can_hide():
        pytest.skip("no mount namespace here: the record lists the store as in reach")
    reach = (
        "import pathlib\n\nfrom calc.ops import half\n\n\n"
        "def _evidence_dir():\n"
        "    root = pathlib.Path(__file__).resolve().parents[1]\n"
        "    gitdir = (root / '.git').read_text().split(':', 1)[1].strip()  # the worktree's\n"
        "    return pathlib.Path(gitdir).parents[1] / 'evidence' / %r\n\n\n"
        "def test_half():\n"
        "    where = _evidence_dir()\n"
        "    (where / 'planted').write_text('a forged run')\n"
        "    assert half(4) == 2 and [p.name for p in where.iterdir()] == ['planted']\n"
    ) % inside
    base = repo.commit(PKG)
    candidate = repo.commit({"calc/ops.py": FIX["calc/ops.py"], "tests/test_half.py": reach})
    args = ("--baseline", base, "--candidate", candidate, "--reproducer", REPRODUCER)
    code, doc = certify(repo, tmp_path / "e.json", *args, *(["--store", str(tmp_path / store)] if store else []))
    assert doc is not None and (code, doc["verdict"]["verdict"]) == (0, "CERTIFIED"), doc and doc["verdict"]
    evidence = pathlib.Path(repo.git("rev-parse", "--git-common-dir"))
    evidence = (evidence if evidence.is_absolute() else repo.path / evidence) / "evidence"
    assert (tmp_path / store if store else evidence / "store.sqlite3").exists()
    assert (evidence / inside).is_dir() and not (evidence / inside / "planted").exists()
    said = [m for m in doc["pinning"]["missing"] if "evidence store" in m]
    assert said == (
        []
        if store is None
        else ["the evidence store %s is not the default one: test processes can reach it" % (tmp_path / store)]
    )


#: Tries to leave a file in installed code, in the user's repository (its work tree, its git
#: directory, found through the worktree's ``.git`` file), home, ``/etc`` and the directories of
#: ``PATH``, directly and, given its parent (the runner), through the runner's view
#: (``/proc/<pid>/root``): whether each write was refused.
PLANTER = """import errno
import os
import pwd
import site
import sysconfig


def _refused(extra=(), parent=None):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, ".git")) as fh:
        common = os.path.dirname(os.path.dirname(fh.read().split(":", 1)[1].strip()))
    home = pwd.getpwuid(os.getuid()).pw_dir  # the user's own, not the HOME a test process is given
    places = {*site.getsitepackages(), sysconfig.get_paths()["stdlib"], common, os.path.dirname(common), *extra}
    places |= {home, "/etc", *(d for d in os.environ.get("PATH", "").split(os.pathsep) if d)}
    if parent is not None:  # and round the view: the runner's, through /proc
        places |= {"/proc/%d/root%s" % (parent, p) for p in places if p.startswith("/")}
    refused = []
    for place in sorted(places):
        where = os.path.join(place, "evidence-planted")
        try:
            open(where, "x").close()
        except OSError as exc:
            refused.append(exc.errno in (errno.EROFS, errno.EACCES))
        else:
            os.remove(where)
            refused.append(False)
    return refused


"""


@pytest.mark.parametrize("where", ["test", "import"])
def test_threat_candidate_code_plants_nothing_outside_its_checkout(
    repo: Repo, tmp_path: pathlib.Path, where: str
) -> None:
    """A ``.pth`` file a test plants in the target's ``site-packages`` -- or a module it rewrites
    there, pytest's own or the plugin's private copy -- runs in every later process of that
    interpreter: the next certify's tests and probes, where no check of this one looks (reviews'
    probes, each a false CERTIFIED of a later candidate). A hook or configuration written into
    the repository's git directory ran in the runner's own git (an independent check's
    ``post-checkout`` rewrote a later no-fix candidate's checkout: CERTIFIED); a file written into
    the user's work tree is the user's to find. Every test process, and T2's import probe, sees
    all of it read-only: the candidate below is certified only where each write is refused, and
    whatever it managed to write it takes back at once."""
    if not netns.available():
        pytest.skip("no mount namespace here: the record lists installed code as writable")
    base = repo.commit(PKG)
    if where == "test":
        test = PLANTER + (
            "import pytest\nimport pytest_evidence\n\nfrom calc.ops import half\n\n\n"
            "def test_half():\n"
            "    ours = [os.path.dirname(pytest.__file__), os.path.dirname(pytest_evidence.__file__)]\n"
            "    refused = _refused(ours, os.getppid())\n"
            "    assert half(4) == 2 and refused and all(refused), refused\n"
        )
        change = {"calc/ops.py": FIX["calc/ops.py"], "tests/test_half.py": test}
    else:
        guarded = "\n\nif not all(_refused()):\n    raise RuntimeError('planted outside the checkout')\n"
        change = {**FIX, "calc/ops.py": PLANTER + FIX["calc/ops.py"] + guarded}
    candidate = repo.commit(change)
    args = ("--baseline", base, "--candidate", candidate, "--reproducer", REPRODUCER)
    code, doc = certify(repo, tmp_path / "e.json", *args)
    assert doc is not None and (code, doc["verdict"]["verdict"]) == (0, "CERTIFIED"), doc and doc["verdict"]
    assert str(repo.path) in doc["pinning"]["read_only"]
    assert not [m for m in doc["pinning"]["missing"] if "installed code" in m]


DETACHER = """import os
import subprocess
import sys
import time

_SLEEPER = "import os, time\\nopen(%r, 'a').write('%%d\\\\n' %% os.getpid())\\ntime.sleep(600)"


def _detach():
    before = _seen()
    subprocess.Popen(
        [sys.executable, "-c", _SLEEPER],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while _seen() == before:  # it runs: its pid is written
        time.sleep(0.01)


def _seen():
    try:
        with open(%r) as fh:
            return fh.read()
    except OSError:
        return ""


"""


@pytest.mark.parametrize("where", ["test", "import"])
def test_threat_a_process_a_test_detaches_ends_with_its_test_process(
    repo: Repo, tmp_path: pathlib.Path, where: str
) -> None:
    """A process started out of the test process's group (``start_new_session``, its pipes let
    go) outlived the certify, and a review's patched the next certify's checkout: a later no-fix
    candidate CERTIFIED. It is in the namespaces its test process entered (or one made inside
    them), and ends with that process -- from a test, and from candidate code at import (T2's
    probe and every test process)."""
    if not netns.available():
        pytest.skip("no network namespace here")
    pids = tmp_path / "pids"
    base = repo.commit(PKG)
    detacher = DETACHER % (str(pids), str(pids))
    if where == "test":
        test = detacher + "from calc.ops import half\n\n\ndef test_half():\n    _detach()\n    assert half(4) == 2\n"
        change = {"calc/ops.py": FIX["calc/ops.py"], "tests/test_half.py": test}
    else:
        change = {**FIX, "calc/ops.py": detacher + FIX["calc/ops.py"] + "\n\n_detach()\n"}
    candidate = repo.commit(change)
    try:
        code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", candidate)
        started = [int(p) for p in pids.read_text().split()]
        left = [pid for pid in started if os.path.exists("/proc/%d" % pid) and not netns._zombie(pid)]
        assert doc is not None and (code, doc["verdict"]["verdict"]) == (0, "CERTIFIED"), doc and doc["verdict"]
        assert len(started) >= 2 and left == [], (started, left)
    finally:
        for pid in [int(p) for p in pids.read_text().split()] if pids.exists() else []:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_no_hook_in_the_repository_runs_in_the_runners_git(repo: Repo, tmp_path: pathlib.Path) -> None:
    """Each certify makes worktrees with the runner's own git: a hook in the repository's git
    directory -- the user's, or one planted there by some route -- ran there, outside any
    sandbox, at every worktree made. The runner's git runs no hook."""
    base = repo.commit(PKG)
    candidate = repo.commit(FIX)
    ran = tmp_path / "hook-ran"
    hooks = repo.path / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("post-checkout", "post-commit", "pre-commit", "post-index-change"):
        (hooks / name).write_text("#!/bin/sh\necho %s >> %s\n" % (name, ran))
        (hooks / name).chmod(0o755)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", candidate)
    assert doc is not None and (code, doc["verdict"]["verdict"]) == (0, "CERTIFIED"), doc and doc["verdict"]
    assert not ran.exists(), ran.read_text()
