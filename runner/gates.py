"""The static gates T0-T2: parse, lint, type check and import the changed files.

Each gate turns its tool's structured output (``ast``/``tomllib``/``json`` exceptions, ruff's and
mypy's JSON) into ``Finding`` objects and ``STATIC_GATE`` results. A gate fails only on hard
findings that are the candidate's own (``findings``): what B already had, and what is in trusted
files, is recorded and passes through. A tool that ends without a usable answer is a
``ToolFailed`` -- its message is the tool's own -- and never a pass.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import pathlib
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from pytest_evidence import syntax
from pytest_evidence.errors import ToolFailed
from pytest_evidence.model import Failure, FailureKind, Finding, Outcome, Role, ValidationResult
from pytest_evidence.seedless_children import HASHSEED_NOT_INHERITED
from runner import findings as judged
from runner import leases, netns
from runner.importgraph import owned_module
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


def _parses(path: str, data: bytes) -> None:
    """``data`` parses as Python (the tree is the climb's shared parse), else the error names ``path``."""
    try:
        syntax.parse(data)
    except (SyntaxError, ValueError):
        ast.parse(data, filename=path)


def _parse_one(path: str, data: bytes) -> Finding | None:
    try:
        if path.endswith(".py"):
            _parses(path, data)
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


def _read(checkout: pathlib.Path) -> Callable[[str], str | None]:
    def read(path: str) -> str | None:
        try:
            return (checkout / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    return read


def _ruff(checkout: pathlib.Path, paths: Sequence[str]) -> tuple[list[Finding], int]:
    cmd = [
        sys.executable,
        "-m",
        "ruff",
        "check",
        "--output-format=json",
        "--no-fix",
        "--exit-zero",
        "--no-cache",
        "--extend-select",
        ",".join(HARD_RUFF),
        *paths,
    ]
    try:
        proc = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolFailed("ruff could not be run: %s" % exc) from None
    try:
        items = json.loads(proc.stdout)
        assert isinstance(items, list)
    except (ValueError, AssertionError):
        raise ToolFailed(
            "ruff ended (exit %d) without an answer: %s" % (proc.returncode, _said(proc.stderr, proc.stdout))
        ) from None
    found = []
    for item in items:
        code = item.get("code")
        rel = str(pathlib.Path(item["filename"]).resolve().relative_to(checkout.resolve()))
        hard = code is None or code.startswith(HARD_RUFF)
        loc = item.get("location") or {}
        found.append(Finding("ruff", rel, loc.get("row"), loc.get("column"), code, item["message"], hard))
    return found, proc.returncode


def lint_gate(
    checkout: pathlib.Path,
    paths: Sequence[str],
    candidate: str,
    baseline: Callable[[], pathlib.Path],
    trusted: Collection[str] = (),
) -> GateResult:
    """T1: ruff with the repository's own configuration; only the candidate's ``HARD_RUFF`` findings halt.

    ``baseline`` gives B's checkout, asked for only when there is a hard finding to compare.
    """
    py = [p for p in paths if p.endswith(".py")]
    if not py:
        return GateResult(True, (), (), "no Python file changed")
    found, code = _ruff(checkout, py)
    on_b: list[Finding] = []
    b_dir: pathlib.Path | None = None
    if any(f.hard and f.path not in trusted for f in found):
        b_dir = baseline()
        present = [p for p in py if (b_dir / p).is_file()]
        on_b = _ruff(b_dir, present)[0] if present else []
    findings = judged.judge(found, on_b, _read(checkout), _read(b_dir) if b_dir else lambda _p: None, trusted)
    results = []
    for path in py:
        mine = [f for f in findings if f.path == path]
        hard = [f for f in mine if f.hard]
        warnings = "\n".join(
            "%s:%s:%s %s %s" % (f.path, f.line, f.column, f.code, f.message) for f in mine if not f.hard
        )
        results.append(
            _result("T1::ruff::" + path, candidate, hard[0] if hard else None, FailureKind.LINT, code, warnings[:4096])
        )
    hard_all = [f for f in findings if f.hard]
    note = (
        "%d hard finding(s), first %s %s:%s" % (len(hard_all), hard_all[0].code, hard_all[0].path, hard_all[0].line)
        if hard_all
        else "%d warning(s), no hard finding of the candidate's" % len(findings)
    )
    return GateResult(not hard_all, tuple(results), tuple(findings), note)


# -- T2 -----------------------------------------------------------------------------------------


def _said(stderr: str, stdout: str = "") -> str:
    """A tool's own complaint: its first ``error`` line, else its last line of any kind."""
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
    flagged = [ln for ln in lines if "error" in ln.lower() and not ln.startswith("{")]
    return (flagged or lines or ["no output"])[0 if flagged else -1][:500]


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


def _mypy(
    checkout: pathlib.Path, py: Sequence[str], target: Target, cache: pathlib.Path | None
) -> tuple[list[Finding], int]:
    """mypy on ``py`` against the target's installed packages, its cache in ``cache`` (None: not
    kept). A run that fails to answer with the cache is run again without it: a cache a killed run
    left corrupt, or one another runner holds locked, must not turn into the tier's error -- and a
    cache that made the difference is dropped, to be built again."""
    if cache is None:
        return _mypy_run(checkout, py, target, os.devnull)
    try:
        return _mypy_run(checkout, py, target, str(cache))
    except ToolFailed:
        answer = _mypy_run(checkout, py, target, os.devnull)
        shutil.rmtree(cache, ignore_errors=True)
        return answer


#: Starts mypy with the working directory -- the checkout -- off ``sys.path`` (``-m`` would put it
#: first): a module the candidate wrote under a name mypy imports (``mypy_extensions``, an optional
#: dependency, a plugin named by module) is not run in the referee. ``-P`` does this from 3.11.
_MYPY_MAIN = (
    "import sys; del sys.path[0]; sys.argv[0] = 'mypy'; from mypy.__main__ import console_entry; console_entry()"
)


def _mypy_run(checkout: pathlib.Path, py: Sequence[str], target: Target, cache_dir: str) -> tuple[list[Finding], int]:
    cmd = [
        sys.executable,
        "-c",
        _MYPY_MAIN,
        "--output",
        "json",
        "--no-error-summary",
        "--hide-error-context",
        "--cache-dir",
        cache_dir,
        "--python-executable",
        target.python,
        *py,
    ]
    env = dict(os.environ)
    env["MYPYPATH"] = os.pathsep.join(str(r) for r in target.roots(checkout))  # the checkout's roots only
    try:
        proc = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True, env=env, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolFailed("mypy could not be run: %s" % exc) from None
    found = []
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        item = json.loads(line)
        hard = item.get("severity") == "error"
        found.append(
            Finding("mypy", item["file"], item.get("line"), item.get("column"), item.get("code"), item["message"], hard)
        )
    # Exit 1 with findings is an answer, even when they are all notes (mypy's JSON output exits 1
    # on a lone note); exit 1 with nothing parsed, or 2 and above, is not.
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not found):
        raise ToolFailed(
            "mypy ended (exit %d) without an answer: %s" % (proc.returncode, _said(proc.stderr, proc.stdout))
        )
    return found, proc.returncode


#: Imports each owned module, byte-compiles the rest. Before each import it says which module it
#: imports, so a module that kills or hangs the probe is named; the answer line carries a nonce
#: read from stdin, so the code being imported cannot print a forged one.
_IMPORT_PROBE = """
import importlib, json, os, sys
if os.environ.pop(NOT_INHERITED, None) is not None:  # as the plugin does: its imports' subprocesses draw their seed
    os.environ.pop("PYTHONHASHSEED", None)
nonce = sys.stdin.readline().strip()
sys.stdin.close()
out = {}
for path, name in json.loads(sys.argv[1]):
    try:
        with open(path, "rb") as fh:
            compile(fh.read(), path, "exec")  # byte-compile without writing .pyc files
        if name:
            print("IMPORTING " + json.dumps(path), flush=True)
            mod = importlib.import_module(name)
            out[path] = {"ok": True, "file": getattr(mod, "__file__", None)}
        else:
            out[path] = {"ok": True, "file": None}
    except BaseException as exc:
        out[path] = {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)}
print("ANSWER-" + nonce + " " + json.dumps(out), flush=True)
""".replace("NOT_INHERITED", repr(HASHSEED_NOT_INHERITED))


def _probe(
    checkout: pathlib.Path, probe: Sequence[tuple[str, str | None]], target: Target, sandbox: Sandbox
) -> tuple[dict[str, dict[str, object]], int | None]:
    """The probe's answer per file; a module that ended or hung the probe is that module's failure."""
    limit = sandbox.test_timeout or sandbox.tier_budget or IMPORT_LIMIT
    nonce = secrets.token_hex(16)
    # Leased as every test process's scratch is: what a removal cut short by a signal leaves (a
    # review saw one on a SIGTERM), or what the candidate's own processes wrote after it, the
    # next runner reaps.
    with leases.leased("evidence-import-") as scratch:
        with subprocess.Popen(
            [target.python, "-c", _IMPORT_PROBE, json.dumps(list(probe))],
            cwd=checkout,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            env=sandbox.environ(target.env(checkout), scratch),
            preexec_fn=sandbox.preexec,
        ) as proc:
            # what candidate code started at import, and left, ends with the probe
            stdout, stderr, exhausted = netns.Confined(proc, proc.kill, sandbox.network == "netns").read(
                limit, nonce + "\n"
            )
        code = None if exhausted else proc.returncode
        ended = (
            "did not finish in %gs" % limit if exhausted else "ended (exit %d: %s)" % (proc.returncode, _said(stderr))
        )
    lines = stdout.splitlines()
    for line in reversed(lines):
        if line.startswith("ANSWER-%s " % nonce):
            return json.loads(line.split(" ", 1)[1]), code
    importing = [json.loads(ln.split(" ", 1)[1]) for ln in lines if ln.startswith("IMPORTING ")]
    if not importing:
        raise ToolFailed("the import probe %s before importing anything" % ended)
    return {importing[-1]: {"ok": False, "error": "the import probe %s while importing it" % ended}}, code


def _portable(message: str, checkout: pathlib.Path) -> str:
    """An error message with the checkout's own path taken out: B's and C's then compare."""
    return message.replace(str(checkout) + os.sep, "").replace(str(checkout), ".")


def _probe_baseline(
    b_dir: pathlib.Path,
    failures: Sequence[Finding],
    owned: dict[str, str | None],
    target: Target,
    sandbox: Sandbox,
) -> list[Finding]:
    """The same files through the import probe on B: the failures B already had."""
    present = [f.path for f in failures if (b_dir / f.path).is_file()]
    if not present:
        return []
    answers, _code = _probe(b_dir, [(str(b_dir / p), owned[p]) for p in present], target, sandbox)
    return [
        Finding("import", p, None, None, "import", _portable(str(got["error"]), b_dir), True)
        for p in present
        if not (got := answers.get(str(b_dir / p), {"ok": True}))["ok"]
    ]


def type_gate(
    checkout: pathlib.Path,
    paths: Sequence[str],
    candidate: str,
    target: Target,
    baseline: Callable[[], pathlib.Path],
    sandbox: Sandbox,
    mypy_cache: pathlib.Path | None,
    refuse_mypy: str | None,
) -> tuple[GateResult, dict[str, str | None]]:
    """T2: mypy where configured, then import every changed module the library owns on C.

    Changed files the library does not own (``setup.py``, ``docs/``, scripts, examples) are
    byte-compiled, not imported: importing them would run a build or need a documentation theme.
    The import runs the candidate's import-time code, so it runs pinned like a test process: no
    network, scrubbed environment, temporary ``HOME``.

    A mypy error B already had (``findings``) is recorded but does not halt: real repositories
    often carry type errors, or miss stubs, that no candidate introduced. ``mypy_cache``: mypy's
    incremental cache, kept between runs -- the typeshed and the installed packages it analyses
    are most of a small project's check, and mypy revalidates every cached module against its
    source's hash, so the answer is the uncached one. ``refuse_mypy``: why mypy must not run at
    all (its configuration loads the candidate's plugin). Returns the gate and, per changed
    module, the file it was imported from.
    """
    py = [p for p in paths if p.endswith(".py")]
    if not py:
        return GateResult(True, (), (), "no Python file changed"), {}
    # The declared roots first; the checkout root and src/ as fallbacks, so that a changed module
    # outside the declared roots is still imported -- and its provenance checked.
    roots = [*target.relative_roots(checkout), "", "src"]
    owned = {p: owned_module(checkout, p, roots) for p in py}
    findings: list[Finding] = []
    results: list[ValidationResult] = []
    notes = []
    typed = [p for p in py if owned[p]]
    if refuse_mypy is not None and typed:
        notes.append("mypy not run: %s" % refuse_mypy)
    elif mypy_configured(checkout) and typed:
        found, code = _mypy(checkout, typed, target, mypy_cache)
        unenforced = 0
        if any(f.hard for f in found):
            b_dir = baseline()
            on_b = [p for p in typed if (b_dir / p).is_file()]
            b_found = _mypy(b_dir, on_b, target, mypy_cache)[0] if on_b else []
            found = judged.judge(found, b_found, _read(checkout), _read(b_dir))
            unenforced = sum(1 for f in b_found if f.hard)
        if unenforced:
            # B's own code fails the repository's mypy configuration in these very files: the
            # project does not hold its code to it, so a candidate is not held to it either. Its
            # new errors stay in the record as warnings; T1's undefined names and the import probe
            # still catch code that cannot run.
            found = [dataclasses.replace(f, hard=False) for f in found]
            notes.append("mypy not enforced: B has %d error(s) in these files under its configuration" % unenforced)
        findings.extend(found)
        for path in typed:
            bad = [f for f in found if f.path == path and f.hard]
            results.append(
                _result("T2::mypy::" + path, candidate, bad[0] if bad else None, FailureKind.TYPE_ERROR, code)
            )
        errors = [f for f in found if f.hard]
        first = " (first %s:%s %s)" % (errors[0].path, errors[0].line, errors[0].message) if errors else ""
        notes.append("mypy: %d new error(s)%s" % (len(errors), first))
    else:
        notes.append("mypy not configured by the repository" if typed else "no changed module to type-check")
    probe = [(str(checkout / p), owned[p]) for p in py]
    imported, probe_exit = _probe(checkout, probe, target, sandbox)
    failures = [
        Finding("import", path, None, None, "import", _portable(str(got["error"]), checkout), True)
        for (abspath, _name), path in zip(probe, py, strict=True)
        if not (got := imported.get(abspath, {"ok": False, "error": "not reached: the import probe ended before it"}))[
            "ok"
        ]
    ]
    if failures:
        failures = judged.judge(
            failures, _probe_baseline(baseline(), failures, owned, target, sandbox), _read(checkout), _read(checkout)
        )
    failed_at = {f.path: f for f in failures}
    origins: dict[str, str | None] = {}
    for (abspath, name), path in zip(probe, py, strict=True):
        finding = failed_at.get(path)
        if finding:
            findings.append(finding)
        got = imported.get(abspath, {})
        if name and got.get("ok"):
            origins[name] = str(got["file"]) if got["file"] else None
        check = "import" if name else "compile"
        failing = finding if finding is not None and finding.hard else None
        summary = "" if finding is None or finding.hard else finding.message
        results.append(
            _result("T2::%s::%s" % (check, path), candidate, failing, FailureKind.IMPORT_ERROR, probe_exit, summary)
        )
    hard = [f for f in findings if f.hard]
    failed = [f for f in findings if f.check == "import" and f.hard]
    notes.append(
        "%d module(s) imported, %d file(s) byte-compiled only" % (len(origins), sum(1 for p in py if not owned[p]))
        + ("; %s: %s" % (failed[0].path, failed[0].message) if failed else "")
    )
    return GateResult(not hard, tuple(results), tuple(findings), "; ".join(notes)), origins
