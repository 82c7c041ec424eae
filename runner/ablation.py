"""Mechanisms removed one at a time, for the A/B harness's ablations (spec §7.3, docs/ab.md).

Only ``evidence-runner ab`` asks for these (``certify --ablate M``): a certification with a
mechanism removed is not a certification, and its record says which were removed
(``invocation.ablate``). Each removal is the smallest change that takes the mechanism's effect
out of the verdict:

* ``selection`` -- T4-T6 select nothing; T7 runs the whole suite.
* ``tamper`` -- no integrity check and no reapplication of the trusted tests: the candidate's own
  tests run as it wrote them.
* ``flake-policy`` -- reruns at the cap (5), one run per side (no stability runs), nothing
  quarantined.
* ``pinning`` -- the tests run as a plain ``pytest`` would: no seed, the network open, no
  per-test timeout, the environment not scrubbed (``sandbox.unpinned``).
* ``audit`` -- no audit tier (the A/B battery audits only under ``ab --audit``).
* ``steering`` -- nothing to remove: a certification never calls the learned step, so the
  ablated arm is the battery itself, and the ablation shows it (a zero delta flags it).

Not built, and refused by name: ``typing`` and ``baseline-replay``, whose removal reaches into
every tier's verdict (docs/ab.md says what each would take).
"""

from __future__ import annotations

import dataclasses

from runner.ladder.invocation import Invocation

BUILT = ("selection", "tamper", "flake-policy", "pinning", "audit", "steering")
NOT_BUILT = ("typing", "baseline-replay")

#: The flake policy's reruns cap (``pytest_evidence.flake.MAX_RERUNS``): "unlimited" within the option's bound.
RERUNS_CAP = 5


def applied(how: Invocation) -> Invocation:
    """``how`` with the options its ablations change."""
    if how.ablated("flake-policy"):
        how = dataclasses.replace(how, reruns=RERUNS_CAP, stability_runs=1)
    if how.ablated("audit"):
        how = dataclasses.replace(how, audit=False, min_kill_rate=None, critical=())
    return how
