"""``evidence-runner steer`` on records certify really wrote: one call, recorded beside the verdict.

The model is always ``ScriptedModel``; nothing here opens a socket.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from typing import Any

import jsonschema
import pytest
from conftest import FIX, PKG, Repo, certify

from runner import steer_cmd, steering
from runner.cli import main

ANSWER = json.dumps(
    {"steering_action": "pytest tests/test_half.py -x", "interpretation": "half() still rounds up on even input"}
)


def _args(tmp_path: pathlib.Path, record: pathlib.Path, out: pathlib.Path) -> argparse.Namespace:
    (tmp_path / "c.patch").write_text("--- a/calc/ops.py\n+++ b/calc/ops.py\n")
    (tmp_path / "intent.txt").write_text("half(4) must be 2")
    return argparse.Namespace(
        record=record, patch=tmp_path / "c.patch", intent=tmp_path / "intent.txt", out=out, max_tokens=256
    )


def test_one_call_on_a_rejected_record_is_recorded_and_the_verdict_stands(
    repo: Repo,
    tmp_path: pathlib.Path,
    schema: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = repo.commit(PKG)
    no_fix = repo.commit({"tests/test_half.py": FIX["tests/test_half.py"]})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", no_fix)
    assert doc is not None and code == 1 and doc["steering"] is None  # a certification never calls it
    model = steering.ScriptedModel([ANSWER, ANSWER], usage=(120, 30))
    out = tmp_path / "steered.json"
    code, said = steer_cmd.run(_args(tmp_path, tmp_path / "e.json", out), model)
    assert code == 0 and said.startswith("STEERED: probe pytest tests/test_half.py -x")
    assert model.calls == 1 and model.received[0]["temperature"] == 0 and model.received[0]["max_tokens"] == 256
    steered = json.loads(out.read_text())
    jsonschema.validate(steered, schema)
    assert steered["steering"] == {
        "model": "scripted",
        "prompt_tokens": 120,
        "completion_tokens": 30,
        "steering_action": "pytest tests/test_half.py -x",
        "interpretation": "half() still rounds up on even input",
        "violation": None,
    }
    assert {k: v for k, v in steered.items() if k != "steering"} == {k: v for k, v in doc.items() if k != "steering"}
    # the opportunity is spent: a second call on the same record would be a re-prompt
    with pytest.raises(Exception, match="already holds its one steering call"):
        steer_cmd.run(_args(tmp_path, out, tmp_path / "again.json"), model)
    assert model.calls == 1
    # from the command line, without configuration: one line naming the variable, no call
    capsys.readouterr()
    monkeypatch.delenv(steering.ENV_BASE_URL, raising=False)
    args = _args(tmp_path, tmp_path / "e.json", tmp_path / "cli.json")
    words = ["steer", "--record", str(args.record), "--patch", str(args.patch), "--intent", str(args.intent)]
    assert main([*words, "--out", str(args.out)]) == 2
    err = capsys.readouterr().err
    assert steering.ENV_BASE_URL in err and err.count("\n") == 1 and not args.out.exists()


def test_a_reply_claiming_green_is_a_violation_and_a_certified_record_is_no_opportunity(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any]
) -> None:
    base = repo.commit(PKG)
    no_fix = repo.commit({"tests/test_half.py": FIX["tests/test_half.py"]})
    certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", no_fix)
    green = json.dumps({"steering_action": None, "interpretation": "All tests pass; the fix is correct."})
    model = steering.ScriptedModel([green, ANSWER])
    out = tmp_path / "steered.json"
    code, said = steer_cmd.run(_args(tmp_path, tmp_path / "e.json", out), model)
    steered = json.loads(out.read_text())
    jsonschema.validate(steered, schema)
    assert code == 0 and said.startswith("VIOLATION claims_green") and model.calls == 1
    assert steered["steering"]["violation"]["kind"] == "claims_green"
    assert steered["steering"]["interpretation"] is None and steered["verdict"]["verdict"] == "REJECTED"

    fixed = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "c.json", "--baseline", base, "--candidate", fixed)
    assert code == 0 and doc is not None
    quiet = steering.ScriptedModel([])
    code, said = steer_cmd.run(_args(tmp_path, tmp_path / "c.json", tmp_path / "none.json"), quiet)
    assert (code, quiet.calls) == (0, 0) and "no steering opportunity" in said
    assert not (tmp_path / "none.json").exists()


def test_what_is_not_a_record_or_a_token_bound_is_one_line_of_bad_input(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {"schema_version": "1.6", "verdict": {"verdict": "REJECTED", "halted_at": "T3", "reasons": ["x"]}}
    (tmp_path / "e.json").write_text(json.dumps(record))
    args = _args(tmp_path, tmp_path / "e.json", tmp_path / "o.json")
    words = ["steer", "--record", str(args.record), "--patch", str(args.patch), "--intent", str(args.intent)]
    assert main([*words, "--out", str(args.out)]) == 2
    assert "is not an evidence record" in capsys.readouterr().err  # a partial record is refused first
    assert main([*words, "--out", str(args.out), "--max-tokens", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and not args.out.exists()
