"""``evidence-runner ab``: every case of a corpus through both arms, same machine, same candidates.

Per case: its repository is built once (``corpus``), its candidates derived (``derive``), and each
candidate judged by each arm -- the battery (``certify``, the FAIL_TO_PASS ids designated, the real
fix's tests trusted), the naive judge (``certify --testexec pytestbool``), and any ablated battery
(``certify --ablate M``) -- each in its own ``evidence-runner`` process, timed from outside. B's
suite run is shared by the battery's candidates of one case through one store, as a harness
certifying many candidates per issue would.

Every arm run is one file under ``OUT/runs/CASE/CANDIDATE/ARM.json``, written when it ends: an
interrupted harness, started again with the same ``--out``, skips what is there. The report
(``OUT/ab.json``, validated against its schema, and ``OUT/ab.md``) is computed from those files.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_evidence.errors import BadInput
from pytest_evidence.output import write_json
from runner import ablation
from runner.ab import corpus, derive

BATTERY, NAIVE = "17battery", "pytestbool"
#: The mechanisms of §7.3 (docs/ab.md).
MECHANISMS = ablation.BUILT


def arms(ablate: Sequence[str], audit: bool) -> list[str]:
    """The arms of a run: both A/B arms, then one ablated battery per mechanism asked for
    (``all``: every built one; the audit's only when the battery audits)."""
    if "all" in ablate:
        chosen = [m for m in ablation.BUILT if m != "audit" or audit]
    else:
        chosen = list(dict.fromkeys(ablate))
    unknown = [m for m in chosen if m not in MECHANISMS]
    if unknown:
        raise BadInput("--ablate %s: not a mechanism (%s, or all)" % (", ".join(unknown), ", ".join(MECHANISMS)))
    if "audit" in chosen and not audit:
        raise BadInput("--ablate audit compares against a battery that audits: add --audit")
    return [BATTERY, NAIVE, *("ablate:%s" % m for m in chosen)]


def run_file(out: pathlib.Path, case: str, candidate: str, arm: str) -> pathlib.Path:
    return out / "runs" / case / candidate / (arm.replace(":", "-") + ".json")


def finished(out: pathlib.Path) -> list[dict[str, Any]]:
    """Every arm run of the candidates each case's latest derivation gave, in a stable order. A
    run of a candidate derived otherwise since, or no longer derived, is kept on disk and never
    counted."""
    rows = []
    for marker in sorted((out / "runs").glob("*/candidates.json")):
        judged = json.loads(marker.read_text()).get("judged") or {}
        for path in sorted(marker.parent.glob("*/*.json")):
            row = json.loads(path.read_text())
            if row.get("judged") is not None and judged.get(row["candidate"]) == row["judged"]:
                rows.append(row)
    return rows


def run_case(
    case: Mapping[str, Any],
    out: pathlib.Path,
    cache: pathlib.Path,
    chosen: Sequence[str],
    audit: bool,
    say: Callable[[str], None],
) -> None:
    """Build the case, derive its candidates, and judge each by every arm not judged yet.

    A run is reused only for what it judged (``_judged``): the same candidate -- same derivation
    version, same git tree, which a rebuild gives again where a commit id would not -- under the
    same case line and ``--audit``. Anything else -- a candidate derived otherwise since, a case
    whose test command or FAIL_TO_PASS was corrected, a run written before runs said what they
    judged -- is run again.
    """
    todo_marker = out / "runs" / case["id"] / "candidates.json"
    if _done(out, case, audit, todo_marker, chosen):
        say("%s: done before, skipped" % case["id"])
        return
    work = pathlib.Path(tempfile.mkdtemp(prefix="evidence-ab-"))
    try:
        say("%s: building (%s case)" % (case["id"], case["format"]))
        built = corpus.build(case, work, cache)
        found, missing = derive.candidates(built)
        judged = {c.name: _judged(case, audit, corpus.git(built.path, "rev-parse", c.sha + "^{tree}")) for c in found}
        marker = {"derivation": derive.VERSION, "candidates": [c.name for c in found], "judged": judged}
        write_json(str(todo_marker), {**marker, "missing": missing})
        for why in missing:
            say("%s: no candidate %s" % (case["id"], why))
        for candidate in found:
            for arm in chosen:
                target = run_file(out, case["id"], candidate.name, arm)
                if _read_judged(target) == judged[candidate.name]:
                    continue
                if target.is_file():
                    changed = "its candidate, case line or --audit changed since its run: judged again"
                    say("%s %s [%s]: %s" % (case["id"], candidate.name, arm, changed))
                row = {**judge(built, candidate, arm, work, audit), "judged": judged[candidate.name]}
                write_json(str(target), row)
                say(
                    "%s %s [%s]: %s (truth: %s) %.1fs"
                    % (case["id"], candidate.name, arm, row["verdict"] or row["error"], candidate.truth, row["seconds"])
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _judged(case: Mapping[str, Any], audit: bool, tree: str) -> str:
    """What a run judges: the candidate's git tree, under this case line and ``--audit``."""
    return "%s:%s" % (tree, _digest(case, audit))


def _digest(case: Mapping[str, Any], audit: bool) -> str:
    return hashlib.sha256(json.dumps([case, audit], sort_keys=True).encode()).hexdigest()[:16]


def _read_judged(run: pathlib.Path) -> str | None:
    """What a finished run judged (None: no run, or one that does not say)."""
    return json.loads(run.read_text()).get("judged") if run.is_file() else None


def _done(out: pathlib.Path, case: Mapping[str, Any], audit: bool, marker: pathlib.Path, chosen: Sequence[str]) -> bool:
    """Every arm judged every candidate of this derivation version, under this case line and
    ``--audit``: nothing to build."""
    if not marker.is_file():
        return False
    derived = json.loads(marker.read_text())
    judged: dict[str, str] = derived.get("judged") or {}
    if derived.get("derivation") != derive.VERSION or set(judged) != set(derived["candidates"]):
        return False
    digest = _digest(case, audit)
    return all(
        key.endswith(":" + digest) and _read_judged(run_file(out, case["id"], n, a)) == key
        for n, key in judged.items()
        for a in chosen
    )


def judge(
    built: corpus.Built, candidate: derive.Candidate, arm: str, work: pathlib.Path, audit: bool
) -> dict[str, Any]:
    """One arm on one candidate, in its own ``evidence-runner`` process."""
    record_path = work / ("%s.%s.json" % (candidate.name, arm.replace(":", "-")))
    store = work / ("store-%s.sqlite3" % arm.replace(":", "-"))
    if arm == NAIVE:  # the case's own command, whole (``--continue-on-collection-errors`` and all)
        args = [*built.certify_args(candidate.sha, record_path, store, built.command), "--testexec=%s" % NAIVE]
    else:
        args = built.certify_args(candidate.sha, record_path, store)
        args += ["--reproducer=%s" % t for t in built.fail_to_pass]
        args += ["--audit"] if audit and arm != "ablate:audit" else []
        args += ["--ablate=%s" % arm.split(":", 1)[1]] if arm.startswith("ablate:") and arm != "ablate:audit" else []
    command = [sys.executable, "-c", "import sys; from runner.cli import main; sys.exit(main())", *args]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    seconds = round(time.perf_counter() - start, 3)
    record = json.loads(record_path.read_text()) if record_path.is_file() else None
    verdict = (record or {}).get("verdict") or {}
    error = None
    if record is None or not verdict:
        error = "exit %d, %s" % (proc.returncode, (proc.stderr.strip().splitlines() or ["no output"])[-1][:300])
    return {
        "case": built.case["id"],
        "split": built.case.get("split", "tuning"),
        "candidate": candidate.name,
        "truth": candidate.truth,
        "tamper": candidate.tamper,
        "arm": arm,
        "verdict": verdict.get("verdict"),
        "accepted": verdict.get("verdict") == "CERTIFIED",
        "exit_code": proc.returncode,
        "seconds": seconds,
        "halted_at": verdict.get("halted_at"),
        "fail_to_pass": list(built.fail_to_pass),
        "error": error,
        "record": record,
    }
