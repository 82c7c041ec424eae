"""CI check: the plugin loads and types results inside an old target interpreter.

Usage: python tests/old_env_check.py /path/to/old/python

The old interpreter has only pytest installed. The plugin is injected the way the runner injects
it -- ``PYTHONPATH`` and ``-p pytest_evidence.plugin`` -- without installing anything there. The
record it writes is validated here, with jsonschema, against the shipped schema.
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


def main(old_python: str) -> int:
    work = pathlib.Path(tempfile.mkdtemp(prefix="old-env-check-"))
    repo = example_repo.build(work / "shop")
    subprocess.run(["git", "checkout", "-q", repo.candidates["honest-fix"]], cwd=repo.path, check=True)
    out = work / "e.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [
            old_python,
            "-m",
            "pytest",
            "-p",
            "pytest_evidence.plugin",
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
