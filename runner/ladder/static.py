"""The static rungs T0-T2, and the integrity check that runs between T0 and T1.

T0 reads the candidate's files from git's objects, so a patch it rejects never pays for a
checkout. Integrity and the interference scan run right after it, before anything runs the
candidate's code: every later rung sees the trusted tests.
"""

from __future__ import annotations

import pathlib
import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_evidence import gitops, overlay
from pytest_evidence.model import DetectionKind, Tier
from runner import config_policy, gates, integrity, interference
from runner.diff import Diff, FileKind, compute
from runner.ladder import judge

if TYPE_CHECKING:
    from runner.ladder.climb import Ladder


def test_modules(ladder: Ladder) -> tuple[str, ...]:
    """What pytest takes for a test module, as the trusted tests' configuration says it
    (``python_files``, and any file the pytest arguments name: ``tests.py``,
    ``pkg/tests.py``): every rung asks which files are tests, and all must answer alike -- a
    test file taken for source would run on B as B had it, not as the trusted tests have it."""
    co, invocation = ladder.co, ladder.invocation
    trusted, _label = co.trusted_tests(invocation.tests_from)
    return config_policy.test_modules_at(str(co.repo), trusted, invocation.pytest_args)


def present(diff: Diff) -> list[str]:
    return [f.path for f in diff.files if f.status != "D"]


def gate(ladder: Ladder, tier: Tier, run: Callable[[], gates.GateResult]) -> None:
    """Run one static gate as rung ``tier``; its results and findings join the evidence."""
    start = ladder.enter(tier)
    result = run()
    ladder.evidence.add(result.results)
    status = judge.static_tier(result.passed, len(result.results))
    ladder.tier(tier, status, start, len(result.results), len(result.results), None, result.note, result.findings)


def parsed_by_t0(path: str, modules: tuple[str, ...]) -> bool:
    """Whether T0 parses ``path``: code and configuration, not test data.

    A parser's tests ship files that must not parse (an invalid TOML fixture of a TOML library);
    under a test directory only test modules and conftests are code. Any other file there is data
    the tests read -- a broken helper module still shows, as a collection error at T3.
    ``modules``: what pytest takes for a test module (``test_modules``).
    """
    if not overlay.is_test_file(path, modules):
        return True
    return posixpath.basename(path) == "conftest.py" or overlay.named_by(path, modules)


def parse(ladder: Ladder, diff: Diff) -> None:
    co = ladder.co
    paths = [p for p in present(diff) if parsed_by_t0(p, ladder.test_modules)]
    gate(ladder, Tier.T0, lambda: gates.parse_gate(co.read_candidate, paths, co.candidate))


def protect(ladder: Ladder, diff: Diff) -> Diff:
    """verify_test_integrity and the interference scan; returns the diff of what the tiers test."""
    co, invocation = ladder.co, ladder.invocation
    ladder.enter(Tier.T1)
    on_b = gitops.blobs(str(co.repo), co.baseline)
    links = gitops.symlinks(str(co.repo), co.tested)
    ladder.evidence.detect(interference.scan(co.read_candidate, diff, on_b, co.read_baseline, links))
    if invocation.ablated("tamper"):  # the A/B harness's ablation: the candidate's tests as it wrote them
        ladder.integrity = {
            "trusted": "none (tamper protection ablated)",
            "protected": 0,
            "reapplied": [],
            "removed": [],
            "tested_commit": co.tested,
        }
        return diff
    trusted, label = co.trusted_tests(invocation.tests_from)
    report = integrity.verify_test_integrity(
        str(co.repo),
        co.baseline,
        trusted,
        co.candidate,
        ladder.test_modules,
        invocation.expected_changes,
        invocation.pytest_args,
    )
    ladder.evidence.detect(report.detections)
    ladder.trusted = report.trusted
    if report.lay:
        co.lay(report.lay)
        ladder.progress(
            "integrity: %d tamper finding(s); %d protected file(s) laid from %s"
            % (sum(d.kind is DetectionKind.TAMPER for d in report.detections), len(report.lay), label)
        )
    ladder.integrity = {
        "trusted": label,
        "protected": report.protected,
        "reapplied": sorted(p for p, blob in report.lay.items() if blob is not None),
        "removed": sorted(p for p, blob in report.lay.items() if blob is None),
        "kept": sorted(report.kept),
        "dropped": sorted(report.dropped),
        "tested_commit": co.tested,
    }
    return diff if co.tested == co.candidate else compute(str(co.repo), co.baseline, co.tested, ladder.test_modules)


def lint(ladder: Ladder, diff: Diff) -> None:
    co = ladder.co
    py = [p for p in present(diff) if p.endswith(".py")]
    gate(ladder, Tier.T1, lambda: gates.lint_gate(co.c_dir, py, co.candidate, lambda: co.b_dir, ladder.trusted))


def mypy_cache(ladder: Ladder) -> pathlib.Path:
    """mypy's incremental cache, beside the store (``store.sqlite3`` -> ``store.mypy-cache``):
    kept where the runner already writes, shared by B and C and by every candidate of the
    repository, never in a checkout."""
    return pathlib.Path(ladder.store.path).with_suffix(".mypy-cache")


def types(ladder: Ladder, diff: Diff) -> None:
    """T2; every C run afterwards reports where the modules it imported came from."""
    co = ladder.co
    sources = [f.path for f in diff.of_kind(FileKind.SOURCE) if f.status != "D"]
    origins: dict[str, str | None] = {}
    # Past an attack (``--full``), a plugin of the candidate's is still never loaded.
    plugged = [d.path for d in ladder.evidence.detections if d.detail == "mypy_plugin"]
    refuse = "%s loads a mypy plugin of the candidate's (source_interference)" % plugged[0] if plugged else None

    def run() -> gates.GateResult:
        result, found = gates.type_gate(
            co.c_dir,
            sources,
            co.candidate,
            ladder.target,
            lambda: co.b_dir,
            ladder.sides.first_box("C"),  # the import probe runs C's code first: without the marks
            mypy_cache(ladder),
            refuse,
        )
        origins.update(found)
        return result

    gate(ladder, Tier.T2, run)
    ladder.sides.watch = sorted(origins)
    ladder.sides.provenance(origins, "the import probe")
