"""The generated reference pages say what the code says, and the code says something about every
option: a page a reader trusts must fail the tests the moment it is stale, and an option without a
help text is a blank line in it."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_evidence.model import READABLE_VERSIONS, SCHEMA_VERSION
from runner.cli import _parser

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT / "docs" / "generate.py"


def _generator() -> ModuleType:
    """``docs/generate.py``, which is a script, not a module of any package."""
    spec = importlib.util.spec_from_file_location("docs_generate", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_generated_pages_are_current() -> None:
    run = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr  # names each stale page and the command that regenerates it


def test_check_names_each_stale_page_and_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    generate = _generator()
    wanted = generate.pages()
    for path, text in wanted.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    assert generate.main(["--check"], root=tmp_path) == 0

    (tmp_path / "docs" / "cli.md").write_text("an older page\n", encoding="utf-8")
    (tmp_path / "docs" / "schema-reference.md").unlink()
    assert generate.main(["--check"], root=tmp_path) == 1
    said = capsys.readouterr().err
    assert "docs/cli.md is stale" in said and "docs/schema-reference.md is stale" in said
    assert "plugin-options" not in said
    assert "python docs/generate.py" in said

    assert generate.main([], root=tmp_path) == 0
    assert generate.stale(tmp_path, wanted) == []


def test_every_option_has_a_help_text() -> None:
    """Every command and option of ``evidence-runner`` and of the plugin, ini keys included."""
    generate = _generator()
    missing = []
    for command in generate.commands(_parser()):
        if not (command.help or "").strip():
            missing.append("%s (the command)" % command.prog)
        for action in command.parser._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                continue
            if not (action.help or "").strip():
                missing.append(
                    "%s %s" % (command.prog, "/".join(action.option_strings) or action.metavar or action.dest)
                )
    registered = generate.plugin_registration()
    options = [option for group in registered.groups for option in group.options]
    missing += ["pytest %s" % "/".join(o.names) for o in options if not o.help.strip()]
    missing += ["ini key %s" % key.name for key in registered.ini if not key.help.strip()]
    assert not missing, "options without a help text:\n  " + "\n  ".join(missing)


def test_the_record_page_names_the_current_format_and_each_one_before() -> None:
    """``docs/evidence-record.md`` is written by hand: its top-level row said 1.11 while records
    said 1.14. Every version the schema accepts has its history row; the table names the newest."""
    page = (ROOT / "docs" / "evidence-record.md").read_text()
    rows = {line.split("|")[1].strip() for line in page.splitlines() if line.startswith("| 1.")}
    assert set(READABLE_VERSIONS) <= rows, sorted(set(READABLE_VERSIONS) - rows)
    assert '| `schema_version` | `"%s"` |' % SCHEMA_VERSION in page


def test_the_schema_describes_the_current_format() -> None:
    """The shipped schema's description said 1.21 while records said 1.22: what a harness reads
    first about the format names the one the plugin writes."""
    schema = json.loads((ROOT / "pytest_evidence" / "evidence.schema.json").read_text())
    assert schema["description"].startswith("Schema version %s " % SCHEMA_VERSION), schema["description"]
    assert schema["properties"]["schema_version"]["enum"][-1] == SCHEMA_VERSION


def test_the_readme_names_the_current_format() -> None:
    """README.md said schema version 1.15 while records said 1.17: the first page a user reads
    names the format the plugin writes, or none."""
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"schema version (\d+\.\d+)", readme))
    assert named == {SCHEMA_VERSION}, named
