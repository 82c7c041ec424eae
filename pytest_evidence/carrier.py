"""The subprocess carrier: copied as ``sitecustomize.py`` beside the private copy of this package
that the runner puts on the test processes' ``PYTHONPATH`` (``inject.private_copy``).

Python imports ``sitecustomize`` at startup, so every Python subprocess a test starts loads the
socket guard before any of its own code, and logs its attempts where the runner reads them
(``sockguard.LOG_VARIABLE``). Non-Python subprocesses are held by the network namespace alone, and
the record says so (``pinning.subprocess_guard``). An interpreter's own ``sitecustomize`` (Debian
ships one) is still run: this one hides it, so it loads it by hand from the rest of ``sys.path``.
Imported any other way (as ``pytest_evidence.carrier``) it does nothing.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys


def _carry() -> None:
    log = os.environ.get("PYTEST_EVIDENCE_NETLOG")
    if log:
        from pytest_evidence import sockguard

        sockguard.carry(log)


def _chain() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if __name__ == "sitecustomize":
    _carry()
    _chain()
