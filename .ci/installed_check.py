"""CI check: the runner installed from its wheel judges a target environment that is not its own.

Usage: <wheel venv>/bin/python .ci/installed_check.py <target python>

Run with the interpreter of the venv the wheel was installed into (not editable), so ``runner``
below is the installed package. The target holds pytest and no guard plugins. Each example
candidate must get its verdict, and each record must describe the target -- its Python, its pytest,
its distributions -- and name what was injected into it.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

from runner import example_repo

CANDIDATES = ("honest-fix", "type-error", "regression", "integration-break")


def _target(python: str) -> list[object]:
    code = (
        "import importlib.metadata as m, json, pytest, sys; print(json.dumps(["
        "'%d.%d.%d' % sys.version_info[:3], pytest.__version__, len({d.metadata['Name'] for d in m.distributions()})]))"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout
    found: list[object] = json.loads(out)
    return found


def main(python: str) -> int:
    runner = pathlib.Path(sys.executable).parent / "evidence-runner"
    if "site-packages" not in example_repo.__file__:
        print("FAIL: runner imported from %s, not from an installed wheel" % example_repo.__file__)
        return 1
    work = pathlib.Path(tempfile.mkdtemp(prefix="installed-check-"))
    repo = example_repo.build(work / "shop")
    expected_env = _target(python)
    failures = 0
    for name in CANDIDATES:
        out = work / ("%s.json" % name)
        proc = subprocess.run(
            [str(runner), "certify", *repo.certify_args(name, out), "--python", python],
            capture_output=True,
            text=True,
        )
        if not out.exists():
            print("FAIL: %s wrote no record (exit %d): %s" % (name, proc.returncode, proc.stderr.strip()[-800:]))
            failures += 1
            continue
        doc = json.loads(out.read_text())
        got = (doc["verdict"]["verdict"], doc["verdict"]["halted_at"])
        env = doc["environment"]
        seen = [env["python"], env["pytest"], env["distributions"]]
        injected = set(env["injected"] or {})
        problems = []
        if got != example_repo.EXPECTED[name]:
            problems.append("verdict %s, expected %s" % (got, example_repo.EXPECTED[name]))
        if seen != expected_env:
            problems.append("environment %s, but the target has %s" % (seen, expected_env))
        if "pytest-evidence" not in injected or "pytest-timeout" not in injected:
            problems.append("injected %s" % sorted(injected))
        if problems:
            print("FAIL: %s: %s" % (name, "; ".join(problems)))
            failures += 1
        else:
            print("ok: %s %s (python %s, pytest %s, injected %s)" % (name, got, seen[0], seen[1], sorted(injected)))
    failures += _audit(runner, repo, work, python, str(expected_env[0]))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


def _audit(runner: pathlib.Path, repo: example_repo.ExampleRepo, work: pathlib.Path, python: str, version: str) -> int:
    """The audit's mutants run in the target's interpreter, where mutmut itself could not."""
    out = work / "audit.json"
    args = [str(runner), "certify", *repo.certify_args("honest-fix", out), "--python", python, "--audit"]
    proc = subprocess.run(args, capture_output=True, text=True)
    doc = json.loads(out.read_text()) if out.exists() else None
    rung = next((t for t in doc["tiers"] if t["tier"] == "audit"), None) if doc else None
    if doc is None or rung is None or rung["status"] != "passed" or doc["environment"]["python"] != version:
        print("FAIL: certify --audit (exit %d): %s" % (proc.returncode, rung or proc.stderr.strip()[-800:]))
        return 1
    suite = doc["audit"]["suite"]
    if not suite["mutants_run"] or doc["verdict"]["verdict"] != "CERTIFIED":
        print("FAIL: certify --audit ran %d mutant(s), verdict %s" % (suite["mutants_run"], doc["verdict"]))
        return 1
    print("ok: --audit on python %s: %d of %d mutant(s) killed" % (version, suite["killed"], suite["mutants_run"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
