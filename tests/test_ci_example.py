"""The CI examples do what examples/ci/README.md says, and every command in them is one the
runner's real parser accepts -- so an option renamed in ``runner/`` breaks this test, not a user's
first pipeline."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped, unused-ignore]

from pytest_evidence.errors import Usage
from runner.cli import _parser

CI = Path(__file__).resolve().parent.parent / "examples" / "ci"
WORKFLOW = CI / "github-actions.yml"
SCRIPT = CI / "certify.sh"

#: What a shell or GitHub Actions would put in place of an expression, for the parser's sake.
PLACEHOLDER = "PLACEHOLDER"
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
_SHELL_VALUE = re.compile(r"\$(\{[^}]*\}|\([^)]*\)|[A-Za-z_][A-Za-z0-9_]*|[?#@*!$0-9-])")
_OPERATOR = re.compile(r"^[;&|()<>]+$")


def _workflow() -> dict[Any, Any]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def _steps() -> list[dict[str, Any]]:
    return [step for job in _workflow()["jobs"].values() for step in job["steps"]]


def _certify_step() -> dict[str, Any]:
    found = [s for s in _steps() if "evidence-runner certify" in s.get("run", "")]
    assert len(found) == 1, "exactly one step runs evidence-runner certify"
    return found[0]


def _lines(script: str) -> Iterator[str]:
    """The script's commands: continued lines joined, comments left out."""
    for line in script.replace("\\\n", " ").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            yield line


def _invocations(script: str) -> list[list[str]]:
    """The words after each ``evidence-runner`` a script runs, up to the next shell operator,
    unexpanded (``"$BASE"`` is the word ``$BASE``)."""
    found = []
    for line in _lines(_EXPRESSION.sub(PLACEHOLDER, script)):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
        for i, word in enumerate(words):
            if word == "evidence-runner":
                rest = words[i + 1 :]
                ends = [j for j, w in enumerate(rest) if _OPERATOR.match(w)]
                found.append(rest[: ends[0]] if ends else rest)
    return found


def _option(words: list[str], name: str) -> str:
    assert name in words, "%s is not given: %s" % (name, " ".join(words))
    return words[words.index(name) + 1]


def _assigned(script: str, variable: str) -> str:
    """What the script assigns to ``variable`` (``NAME=value`` alone on its line)."""
    found = re.findall(r"^\s*%s=(.+)$" % re.escape(variable), script, re.MULTILINE)
    assert len(found) == 1, "%s is assigned once in the certify step" % variable
    return str(found[0]).strip()


def _variables(text: str) -> list[str]:
    return re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", text)


def test_the_workflow_runs_on_pull_requests() -> None:
    trigger = _workflow()[True]  # YAML 1.1 reads the key `on` as true
    assert trigger == "pull_request" or "pull_request" in trigger


def test_the_checkout_has_the_whole_history() -> None:
    checkouts = [s for s in _steps() if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert len(checkouts) == 1
    assert checkouts[0]["with"]["fetch-depth"] == 0  # the merge base must be in the clone


def test_certify_judges_the_head_against_the_merge_base() -> None:
    step = _certify_step()
    script, env = step["run"], step["env"]
    (words,) = [w for w in _invocations(script) if w[0] == "certify"]
    baseline = _variables(_option(words, "--baseline"))
    candidate = _variables(_option(words, "--candidate"))
    assert len(baseline) == 1 and len(candidate) == 1

    merge_base = re.fullmatch(r"\$\(git merge-base (.+)\)", _assigned(script, baseline[0]))
    assert merge_base, "--baseline is $(git merge-base ...)"
    sides = {env[name] for name in _variables(merge_base.group(1))}
    assert sides == {"${{ github.event.pull_request.base.sha }}", "${{ github.event.pull_request.head.sha }}"}

    (head,) = _variables(_assigned(script, candidate[0]))
    assert env[head] == "${{ github.event.pull_request.head.sha }}"


def test_certify_writes_the_record_and_the_pages_the_artifact_keeps() -> None:
    (words,) = [w for w in _invocations(_certify_step()["run"]) if w[0] == "certify"]
    assert (_option(words, "--out"), _option(words, "--html"), _option(words, "--markdown")) == (
        "evidence.json",
        "evidence.html",
        "evidence.md",
    )
    steps = _steps()
    uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert len(uploads) == 1
    upload = uploads[0]
    assert upload["if"] == "always()", "the record is kept when the job fails too"
    assert {"evidence.json", "evidence.html"} <= set(upload["with"]["path"].split())
    assert steps.index(upload) > steps.index(_certify_step())


def test_certify_exit_code_decides_the_job() -> None:
    """Only CERTIFIED (0) passes: the step ends with certify's own exit code, and nothing lets a
    failing step pass the job."""
    step = _certify_step()
    lines = list(_lines(step["run"]))
    (call,) = [line for line in lines if "evidence-runner certify" in line]
    assert call.rstrip().endswith("|| status=$?")
    assert _assigned(step["run"], "status") == "0"
    assert lines[-1].strip() == 'exit "$status"'
    assert not step.get("continue-on-error")
    assert not any(job.get("continue-on-error") for job in _workflow()["jobs"].values())


def test_certify_sh_passes_on_certify_exit_code() -> None:
    lines = list(_lines(SCRIPT.read_text(encoding="utf-8")))
    (call,) = [line for line in lines if "evidence-runner certify" in line]
    assert call.rstrip().endswith("|| status=$?")
    assert lines[-1].strip() == 'exit "$status"'
    assert any(re.match(r"BASE=\$\(git merge-base ", line) for line in lines)


def _every_invocation() -> Iterator[tuple[str, list[str]]]:
    for step in _steps():
        for words in _invocations(step.get("run", "")):
            yield "%s, step %r" % (WORKFLOW.name, step.get("name")), words
    for words in _invocations(SCRIPT.read_text(encoding="utf-8")):
        yield SCRIPT.name, words


def test_every_evidence_runner_command_parses() -> None:
    seen = list(_every_invocation())
    assert {where.split(",")[0] for where, words in seen if words[0] == "certify"} == {WORKFLOW.name, SCRIPT.name}
    refused = []
    for where, words in seen:
        argv = [_SHELL_VALUE.sub(PLACEHOLDER, word) for word in words]
        if "--" in argv:  # what follows is pytest's, as runner.cli.main splits it
            argv = argv[: argv.index("--")]
        try:
            _parser().parse_args(argv)
        except Usage as exc:
            refused.append("%s: evidence-runner %s\n  %s" % (where, " ".join(words), exc))
    assert not refused, "the runner's parser refuses:\n" + "\n".join(refused)


def test_the_scripts_are_valid_shell(tmp_path: Path) -> None:
    subprocess.run(["sh", "-n", str(SCRIPT)], check=True)
    for i, step in enumerate(s for s in _steps() if "run" in s):
        script = tmp_path / ("step%d.sh" % i)
        script.write_text(step["run"], encoding="utf-8")
        subprocess.run(["bash", "-n", str(script)], check=True)  # GitHub runs `run:` with bash -e


def test_shellcheck_finds_nothing(tmp_path: Path) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    subprocess.run(["shellcheck", str(SCRIPT)], check=True)
    for i, step in enumerate(s for s in _steps() if "run" in s):
        script = tmp_path / ("step%d.sh" % i)
        script.write_text("#!/bin/bash\n" + step["run"], encoding="utf-8")
        subprocess.run(["shellcheck", str(script)], check=True)
