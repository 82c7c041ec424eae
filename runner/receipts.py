"""Baseline receipts: a baseline run is known to have happened only if its completion was written.

The intent (what is about to run, bound to the repository, ref, full head sha, checkout path,
environment fingerprint, command hash and policy version) is committed to the store before the
command starts; the completion after it ended on its own. Then:

* an exactly matching completion is reused after a restart, nothing is run again;
* a changed head, ref, path, command, environment or policy refuses reuse, naming what changed;
* an intent with no completion -- the runner was killed, the result lost, the time ran out -- is
  *held*: it is never replayed automatically, and says which command reconciles it
  (``evidence-runner receipts reconcile ID --rerun|--abandon``), a decision that is recorded too.

A slot is one baseline operation: ``(kind, repository, ref)`` for ``evidence-runner baseline``,
``(kind, repository, command)`` for the ladder's suite run, whose command names its cache key.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import shlex
import uuid
from dataclasses import dataclass
from typing import Any

from pytest_evidence.store import Store

#: Bumped whenever what a baseline run records, or how, changes: old receipts are then not reused.
#: 9: what a test process finds replaced once its last test is over (record 1.23); 8: the test
#: frameworks' objects found replaced are stored (record 1.22).
POLICY_VERSION = "9"

BINDING_FIELDS = ("repo", "ref", "head", "checkout", "env_fingerprint", "command_hash", "policy_version")


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Binding:
    """What a receipt is a receipt for."""

    kind: str  # "command" or "suite"
    repo: str
    ref: str
    head: str
    checkout: str
    env_fingerprint: str
    command: str
    timeout: float | None = None
    policy_version: str = POLICY_VERSION

    @property
    def command_hash(self) -> str:
        return hashlib.sha256(self.command.encode()).hexdigest()

    def fields(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "repo": self.repo,
            "ref": self.ref,
            "head": self.head,
            "checkout": self.checkout,
            "env_fingerprint": self.env_fingerprint,
            "command": self.command,
            "command_hash": self.command_hash,
            "timeout": self.timeout,
            "policy_version": self.policy_version,
        }

    def slot(self, receipt: dict[str, Any]) -> bool:
        same_op = receipt["ref"] == self.ref if self.kind == "command" else receipt["command"] == self.command
        return bool(receipt["kind"] == self.kind and receipt["repo"] == self.repo and same_op)


@dataclass(frozen=True)
class Admission:
    """What may happen now: ``reuse`` a completion, ``held`` (nothing runs), or ``run`` afresh."""

    action: str
    receipt: dict[str, Any] | None
    reason: str


def reconcile_hint(receipt_id: str, repo: str, store: str) -> str:
    """The whole command that reconciles a held receipt, runnable as printed from anywhere."""
    return "evidence-runner receipts reconcile %s --repo %s --store %s --rerun|--abandon" % (
        receipt_id,
        shlex.quote(repo),
        shlex.quote(os.path.abspath(store)),
    )


def admit(store: Store, binding: Binding) -> Admission:
    mine = [r for r in store.receipts(repo=binding.repo) if binding.slot(r)]
    if not mine:
        return Admission("run", None, "no earlier receipt")
    last = mine[-1]
    if last["completion"] is None and last["decision"] is None:
        return Admission(
            "held",
            last,
            "receipt %s (intent of %s) has no completion: held, nothing is replayed; reconcile with: %s"
            % (last["receipt"], last["created"], reconcile_hint(last["receipt"], binding.repo, store.path)),
        )
    if last["completion"] is None:
        return Admission(
            "run", last, "receipt %s was reconciled (%s)" % (last["receipt"], last["decision"]["decision"])
        )
    changed = [f for f in BINDING_FIELDS if last[f] != binding.fields()[f]]
    if changed:
        what = "; ".join("%s changed (%s -> %s)" % (f, _short(last[f]), _short(binding.fields()[f])) for f in changed)
        return Admission("run", last, "receipt %s not reused: %s" % (last["receipt"], what))
    return Admission(
        "reuse", last, "receipt %s reused: completed %s" % (last["receipt"], last["completion"]["created"])
    )


def _short(value: Any) -> str:
    text = str(value)
    return text[:12] if len(text) == 64 or len(text) == 40 else text


def begin(store: Store, binding: Binding) -> str:
    """Commit the intent; from here on a crash leaves the receipt held."""
    receipt = uuid.uuid4().hex[:16]
    store.receipt_intent(dict(binding.fields(), receipt=receipt, created=now()))
    return receipt


def complete(
    store: Store, receipt: str, exit_code: int, stdout: str, stderr: str, truncated: bool, duration: float
) -> None:
    store.receipt_complete(
        {
            "receipt": receipt,
            "exit_code": exit_code,
            "stdout": stdout,
            "stderr": stderr,
            "truncated": int(truncated),
            "duration": round(duration, 3),
            "created": now(),
        }
    )


def status(receipt: dict[str, Any]) -> str:
    if receipt["completion"] is not None:
        code = receipt["completion"]["exit_code"]
        return "completed (exit %d%s)" % (code, ", red baseline" if code else "")
    if receipt["decision"] is not None:
        return "reconciled: %s" % receipt["decision"]["decision"]
    return "held"
