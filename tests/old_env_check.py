"""CI check: the plugin loads and types results inside an old target interpreter.

Usage: python tests/old_env_check.py [--installed] /path/to/old/python

The old interpreter has only pytest installed. The plugin is injected the way the runner injects
it -- ``PYTHONPATH`` and ``-p pytest_evidence.plugin`` -- without installing anything there. The
record it writes is validated here, with jsonschema, against the shipped schema.

``--installed``: the old interpreter's environment has the wheel installed (with the ``runner``
extra, which installs nothing below Python 3.10), as a project on an old Python installs the
plugin. Nothing is put on its path: the plugin loads by its entry point, ``-p evidence``, and the
``evidence-runner`` script beside it must refuse in one line, with the missing-tool exit code.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner import example_repo  # noqa: E402


def main(old_python: str, installed: bool) -> int:
    work = pathlib.Path(tempfile.mkdtemp(prefix="old-env-check-"))
    repo = example_repo.build(work / "shop")
    subprocess.run(["git", "checkout", "-q", repo.candidates["honest-fix"]], cwd=repo.path, check=True)
    out = work / "e.json"
    env = (
        {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        if installed
        else dict(os.environ, PYTHONPATH=str(ROOT))
    )
    proc = subprocess.run(
        [
            old_python,
            "-m",
            "pytest",
            "-p",
            "evidence" if installed else "pytest_evidence.plugin",
            f"--baseline={repo.baseline}",
            f"--evidence-out={out}",
            "-q",
        ],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
    )
    version = subprocess.run(
        [old_python, "-c", "import sys, pytest; print(sys.version.split()[0], pytest.__version__)"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not out.exists():
        print(
            "FAIL: no record written under %s (exit %d)\n%s"
            % (version, proc.returncode, proc.stdout[-2000:] + proc.stderr[-2000:])
        )
        return 1
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, json.loads((ROOT / "pytest_evidence" / "evidence.schema.json").read_text()))
    new = [r for r in doc["results"] if r["test_id"].endswith("test_ten_items_get_discount")]
    if (
        proc.returncode != 0
        or len(new) != 1
        or not new[0]["bug_discriminating"]
        or new[0]["role"] != "BUG_REPRODUCTION"
    ):
        print("FAIL under %s: exit %d, reproducer %s" % (version, proc.returncode, new))
        return 1
    print(
        "ok: Python/pytest %s typed %d results; the reproducer is bug-discriminating" % (version, len(doc["results"]))
    )
    return _runner_refuses(pathlib.Path(old_python).parent / "evidence-runner", env) if installed else 0


def _runner_refuses(script: pathlib.Path, env: dict[str, str]) -> int:
    """Below Python 3.10 the installed runner says what it needs, in one line, exit 2."""
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, env=env)
    said = proc.stderr.strip().splitlines()
    if proc.returncode != 2 or len(said) != 1 or "needs Python 3.10" not in said[0] or not said[0].endswith("]"):
        print("FAIL: %s exited %d saying %r" % (script, proc.returncode, proc.stderr[-2000:]))
        return 1
    print("ok: %s refuses: %s" % (script.name, said[0]))
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[-1], "--installed" in args[:-1]))
