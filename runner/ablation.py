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
* ``typing`` -- bare booleans: B still runs like for like and its outcome is recorded, but no
  result carries a role or a B/C class, nothing is bug-discriminating, and every tier is judged
  on C's outcomes alone (``bare``). The flake policy still sees both sides (another mechanism,
  held fixed): a reproducer flaky on B is quarantined on C too.
* ``baseline-replay`` -- no B/C contrast: no test is compared on B (no reproducer run, no
  stability run, no like-for-like confirmation), no result has a B outcome, no loopback endpoint
  counts as new on C, and every tier is judged on C's outcomes alone. B's suite run, which
  selection needs for the tests' dependencies (a different mechanism, held fixed), is still made
  once per B and store, or reused from it; its outcomes are never read.

The two share one judge: without types, or without B, a tier can only ask whether its tests pass
on C -- a reproducer passing on C passes T3, any test failing on C fails its tier (a failure B had
too included), and every tier passing certifies.
"""

from __future__ import annotations

import dataclasses

from pytest_evidence.assemble import Typed
from pytest_evidence.model import DetectionKind
from runner.ladder.invocation import Invocation

BUILT = ("selection", "tamper", "flake-policy", "pinning", "audit", "steering", "typing", "baseline-replay")

#: The flake policy's reruns cap (``pytest_evidence.options.MAX_RERUNS``): "unlimited" within the option's bound.
RERUNS_CAP = 5


def bare(how: Invocation) -> bool:
    """Whether the tiers are judged on C's bare outcomes: typing or the B/C contrast removed."""
    return how.ablated("typing") or how.ablated("baseline-replay")


#: What a type says about a result, and nothing a bare boolean could say.
_TYPED_DETECTIONS = frozenset({DetectionKind.REPRODUCER_NOT_FAILING_ON_BASELINE, DetectionKind.TYPING_FAILURE})


def untyped(typed: Typed) -> Typed:
    """``typed`` as bare booleans (the ``typing`` ablation): no role, no B/C class, nothing
    bug-discriminating. B's outcome stays: it ran, and removing typing is not removing B."""
    return Typed(
        tuple(dataclasses.replace(r, role=None, bug_discriminating=False) for r in typed.results),
        {t: dataclasses.replace(a, bc_class=None, typing_failure=None) for t, a in typed.annotations.items()},
        tuple(d for d in typed.detections if d.kind not in _TYPED_DETECTIONS),
    )


def applied(how: Invocation) -> Invocation:
    """``how`` with the options its ablations change."""
    if how.ablated("flake-policy"):
        how = dataclasses.replace(how, reruns=RERUNS_CAP, stability_runs=1)
    if how.ablated("audit"):
        how = dataclasses.replace(how, audit=False, min_kill_rate=None, critical=())
    return how
