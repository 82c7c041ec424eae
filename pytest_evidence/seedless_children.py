"""What a test process the runner starts hands on to its subprocesses: the hash seed, or not.

A process whose referee's marks are changed (the runner's ``Sandbox.vary``) starts with
``PYTHONHASHSEED`` set, so that B and C run under one seed, and with ``HASHSEED_NOT_INHERITED``
beside it: ``drop_inherited_seed`` then takes both out of the process's environment before any
code under test runs. The process keeps the seed it started with; its subprocesses draw their
own, as under a plain ``pytest`` -- a patch that compared a child's ``hash`` with its own to
learn it runs under the referee finds them equal only where the marks are kept.

Standard library only, and no pytest: the runner imports the name too.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

from typing import MutableMapping

HASHSEED_NOT_INHERITED = "PYTEST_EVIDENCE_HASHSEED_NOT_INHERITED"


def drop_inherited_seed(environ: MutableMapping[str, str]) -> None:
    """Take ``PYTHONHASHSEED`` out of ``environ`` when the runner asked for it there."""
    if environ.pop(HASHSEED_NOT_INHERITED, None) is not None:
        environ.pop("PYTHONHASHSEED", None)
