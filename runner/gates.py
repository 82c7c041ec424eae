"""The static gates T0-T2: parse, lint, type check and import the changed files.

Each gate turns its tool's structured output (``ast``/``tomllib``/``json`` exceptions, ruff's and
mypy's JSON) into ``Finding`` objects and ``STATIC_GATE`` results; nothing here reads a tool's
human-oriented text. A gate fails only on hard findings; the rest are recorded and pass through.
"""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_evidence.model import Failure, FailureKind, Finding, Outcome, Role, ValidationResult
from runner.errors import MissingTool
from runner.importgraph import module_of
from runner.sandbox import Sandbox
from runner.target import Target

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: ruff rules that halt T1: syntax errors, undefined names and the like. Everything else warns.
HARD_RUFF = ("E9", "F63", "F7", "F82")
#: Seconds the import probe may take when neither a per-test timeout nor a tier budget is set.
IMPORT_LIMIT = 300.0


@dataclass(frozen=True)
class GateResult:
    passed: bool
    results: tuple[ValidationResult, ...]
    findings: tuple[Finding, ...]
    note: str


def _result(
    test_id: str, candidate: str, failing: Finding | None, kind: FailureKind, exit_code: int | None, summary: str = ""
) -> ValidationResult:
    failure = None
    if failing is not None:
        where = "line %s, column %s: " % (failing.line, failing.column) if failing.line else ""
        failure = Failure(kind, where + failing.message, failing.path, failing.line, failing.code or "")
    return ValidationResult(
        test_id=test_id,
        role=Role.STATIC_GATE,
        candidate_commit=candidate,
        baseline_result=None,
        candidate_result=Outcome.FAIL if failure else Outcome.PASS,
        duration=0.0,
        exit_code=exit_code,
        flaky_history=(),
        affected_by_change=True,
        bug_discriminating=False,
        stdout_summary=summary,
        failure=failure,
    )


# -- T0 -----------------------------------------------------------------------------------------


def _parse_one(path: str, data: bytes) -> Finding | None:
    try:
        if path.endswith(".py"):
            ast.parse(data, filename=path)
        elif path.endswith(".toml"):
            tomllib.loads(data.decode("utf-8"))
        elif path.endswith(".json"):
            json.loads(data.decode("utf-8"))
    except SyntaxError as exc:
        return Finding("parse", path, exc.lineno, exc.offset, "syntax", exc.msg, True)
    except tomllib.TOMLDecodeError as exc:
        return Finding("parse", path, None, None, "toml", str(exc), True)
    except json.JSONDecodeError as exc:
        return Finding("parse", path, exc.lineno, exc.colno, "json", exc.msg, True)
    except UnicodeDecodeError as exc:
        return Finding("parse", path, None, None, "encoding", str(exc), True)
    return None


def parse_gate(read: Callable[[str], bytes], paths: Sequence[str], candidate: str) -> GateResult:
    """T0: every changed Python, TOML and JSON file must parse (``read`` gives a file's bytes)."""
    results, findings = [], []
    for path in paths:
        if not path.endswith((".py", ".toml", ".json")):
            continue
        finding = _parse_one(path, read(path))
        if finding is not None:
            findings.append(finding)
        results.append(_result("T0::parse::" + path, candidate, finding, FailureKind.SYNTAX_ERROR, None))
    bad = [f for f in findings if f.hard]
    note = "%d file(s) parsed" % len(results) if not bad else "%s does not parse" % bad[0].path
    return GateResult(not bad, tuple(results), tuple(findings), note)


# -- T1 -----------------------------------------------------------------------------------------


def lint_gate(checkout: pathlib.Path, paths: Sequence[str], candidate: str) -> GateResult:
    """T1: ruff with the repository's own configuration; only ``HARD_RUFF`` findings halt."""
    py = [p for p in paths if p.endswith(".py")]
    if not py:
        return GateResult(True, (), (), "no Python file changed")
    cmd = [
        sys.executable,
        "-m",
        "ruff",
        "check",
        "--output-format=json",
        "--no-fix",
        "--exit-zero",
        "--extend-select",
        ",".join(HARD_RUFF),
        *py,
    ]
    try:
        proc = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True, timeout=300)
    except FileNotFoundError:  # pragma: no cover - sys.executable always exists
        raise MissingTool("ruff cannot be started") from None
    if proc.returncode != 0 or not proc.stdout.strip().startswith("["):
        if "No module named ruff" in proc.stderr:
            raise MissingTool("ruff is not installed for the runner (%s)" % sys.executable)
        raise MissingTool("ruff failed on the candidate: %s" % (proc.stderr.strip().splitlines() or ["?"])[-1])
    findings = []
    for item in json.loads(proc.stdout):
        code = item.get("code")
        rel = str(pathlib.Path(item["filename"]).resolve().relative_to(checkout.resolve()))
        hard = code is None or code.startswith(HARD_RUFF)
        loc = item.get("location") or {}
        findings.append(Finding("ruff", rel, loc.get("row"), loc.get("column"), code, item["message"], hard))
    results = []
    for path in py:
        mine = [f for f in findings if f.path == path]
        hard = [f for f in mine if f.hard]
        warnings = "\n".join(
            "%s:%s:%s %s %s" % (f.path, f.line, f.column, f.code, f.message) for f in mine if not f.hard
        )
        results.append(
            _result(
                "T1::ruff::" + path,
                candidate,
                hard[0] if hard else None,
                FailureKind.LINT,
                proc.returncode,
                warnings[:4096],
            )
        )
    hard_all = [f for f in findings if f.hard]
    note = (
        "%d hard finding(s), first %s %s:%s" % (len(hard_all), hard_all[0].code, hard_all[0].path, hard_all[0].line)
        if hard_all
        else "%d warning(s), no hard finding" % len(findings)
    )
    return GateResult(not hard_all, tuple(results), tuple(findings), note)


# -- T2 -----------------------------------------------------------------------------------------


def mypy_configured(checkout: pathlib.Path) -> bool:
    if (checkout / "mypy.ini").is_file() or (checkout / ".mypy.ini").is_file():
        return True
    pyproject = checkout / "pyproject.toml"
    if pyproject.is_file():
        try:
            if "mypy" in tomllib.loads(pyproject.read_text()).get("tool", {}):
                return True
        except tomllib.TOMLDecodeError:
            return False
    setup_cfg = checkout / "setup.cfg"
    return setup_cfg.is_file() and "[mypy]" in setup_cfg.read_text()


def _mypy(checkout: pathlib.Path, py: Sequence[str], target: Target) -> tuple[list[Finding], int]:
    cmd = [
        sys.executable,
        "-m",
        "mypy",
        "--output",
        "json",
        "--no-error-summary",
        "--hide-error-context",
        "--python-executable",
        target.python,
        *py,
    ]
    env = target.env(checkout)
    env["MYPYPATH"] = env["PYTHONPATH"]
    proc = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True, env=env, timeout=900)
    if "No module named mypy" in proc.stderr:
        raise MissingTool("mypy is not installed for the runner (%s)" % sys.executable)
    findings = []
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        item = json.loads(line)
        hard = item.get("severity") == "error"
        findings.append(
            Finding("mypy", item["file"], item.get("line"), item.get("column"), item.get("code"), item["message"], hard)
        )
    return findings, proc.returncode


def _new_on_c(findings: list[Finding], baseline: pathlib.Path, paths: Sequence[str], target: Target) -> list[Finding]:
    """Demote the findings B already had to warnings."""
    on_b = {(f.path, f.code, f.message) for f in _mypy(baseline, paths, target)[0]} if paths else set()
    return [
        Finding(f.check, f.path, f.line, f.column, f.code, f.message + " (also on the baseline)", False)
        if f.hard and (f.path, f.code, f.message) in on_b
        else f
        for f in findings
    ]


_IMPORT_PROBE = """
import importlib, json, sys
out = {}
for path, name in json.loads(sys.argv[1]):
    try:
        with open(path, "rb") as fh:
            compile(fh.read(), path, "exec")  # byte-compile without writing .pyc files
        if name:
            mod = importlib.import_module(name)
            out[path] = {"ok": True, "file": getattr(mod, "__file__", None)}
        else:
            out[path] = {"ok": True, "file": None}
    except BaseException as exc:
        out[path] = {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)}
print(json.dumps(out))
"""


def type_gate(
    checkout: pathlib.Path,
    paths: Sequence[str],
    candidate: str,
    target: Target,
    baseline: pathlib.Path,
    sandbox: Sandbox,
) -> tuple[GateResult, dict[str, str | None]]:
    """T2: mypy where configured, then byte-compile and import every changed module on C.

    The import runs the candidate's import-time code, so it runs pinned like a test process: no
    network, scrubbed environment, temporary ``HOME``.

    A mypy error the same files already had on B (same file, code and message) is recorded but
    does not halt: real repositories often carry type errors, or miss stubs, that no candidate
    introduced. Returns the gate and, per changed module, the file it was imported from.
    """
    py = [p for p in paths if p.endswith(".py")]
    if not py:
        return GateResult(True, (), (), "no Python file changed"), {}
    findings: list[Finding] = []
    results: list[ValidationResult] = []
    notes = []
    if mypy_configured(checkout):
        mypy_findings, code = _mypy(checkout, py, target)
        if any(f.hard for f in mypy_findings):
            mypy_findings = _new_on_c(mypy_findings, baseline, [p for p in py if (baseline / p).is_file()], target)
        findings.extend(mypy_findings)
        for path in py:
            bad = [f for f in mypy_findings if f.path == path and f.hard]
            results.append(
                _result("T2::mypy::" + path, candidate, bad[0] if bad else None, FailureKind.TYPE_ERROR, code)
            )
        errors = [f for f in mypy_findings if f.hard]
        first = " (first %s:%s %s)" % (errors[0].path, errors[0].line, errors[0].message) if errors else ""
        notes.append("mypy: %d new error(s)%s" % (len(errors), first))
    else:
        notes.append("mypy not configured by the repository")
    # The declared roots first; the checkout root and src/ as fallbacks, so that a changed module
    # outside the declared roots is still imported -- and its provenance checked.
    roots = [str(r.relative_to(checkout)) if r != checkout else "" for r in target.roots(checkout)] + ["", "src"]
    probe = [(str(checkout / p), module_of(p, roots)) for p in py]
    limit = sandbox.test_timeout or sandbox.tier_budget or IMPORT_LIMIT
    probe_exit: int | None
    with tempfile.TemporaryDirectory(prefix="evidence-import-") as home:
        try:
            proc = subprocess.run(
                [target.python, "-c", _IMPORT_PROBE, json.dumps(probe)],
                cwd=checkout,
                capture_output=True,
                text=True,
                env=sandbox.environ(target.env(checkout), pathlib.Path(home)),
                preexec_fn=sandbox.preexec,
                timeout=limit,
            )
            answer, probe_exit = proc.stdout, proc.returncode
            died = "the import probe ended (exit %d) without an answer: %s" % (probe_exit, proc.stderr.strip()[-300:])
        except subprocess.TimeoutExpired:
            answer, probe_exit = "", None
            died = "importing the changed modules did not finish in %gs" % limit
    try:
        imported = json.loads(answer.strip().splitlines()[-1])
    except (IndexError, ValueError):
        imported = {str(checkout / p): {"ok": False, "error": died.rstrip(": ")} for p in py}
    origins: dict[str, str | None] = {}
    for (abspath, name), path in zip(probe, py, strict=True):
        got = imported.get(abspath, {"ok": False, "error": "no answer from the import probe"})
        finding = None if got["ok"] else Finding("import", path, None, None, "import", got["error"], True)
        if finding:
            findings.append(finding)
        if name and got["ok"]:
            origins[name] = got["file"]
        results.append(_result("T2::import::" + path, candidate, finding, FailureKind.IMPORT_ERROR, probe_exit))
    hard = [f for f in findings if f.hard]
    failed = [f for f in findings if f.check == "import"]
    notes.append(
        "%d module(s) imported" % len(origins) + ("; %s: %s" % (failed[0].path, failed[0].message) if failed else "")
    )
    return GateResult(not hard, tuple(results), tuple(findings), "; ".join(notes)), origins
