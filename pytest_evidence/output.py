"""Where records go: checked before anything runs, written atomically after.

Both entry points write a record (the plugin's ``--evidence-out``, the runner's ``--out``); a
path that cannot take it must fail before the tests run, not after them, and a failed write must
leave nothing half-written behind.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Mapping

from pytest_evidence.errors import BadInput


def check_writable(path: str, option: str, create_parents: bool) -> None:
    """Raise ``BadInput`` unless a file can be written at ``path``.

    ``create_parents``: make missing parent directories (the plugin, as ``--junitxml`` does); else
    a missing parent is the user's mistake (the runner's ``--out``).
    """
    if os.path.isdir(path):
        raise BadInput("%s %s is a directory, not a file" % (option, path))
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        if not create_parents or os.path.exists(parent):
            raise BadInput("%s %s: directory %s does not exist" % (option, path, parent))
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as exc:
            raise BadInput("%s %s: cannot create %s (%s)" % (option, path, parent, exc.strerror or exc)) from None
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".evidence-probe-"):
            pass
    except OSError as exc:
        raise BadInput("%s %s cannot be written (%s)" % (option, path, exc.strerror or exc)) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path: str, doc: Mapping[str, Any]) -> None:
    """Write a record atomically.

    Compact on purpose: ``indent`` forces json's pure-Python encoder, which alone cost more than
    the rest of the plugin on a 2,000-test suite (pretty-print with ``python -m json.tool``).
    """
    write_text(path, json.dumps(doc, separators=(",", ":")) + "\n")


def write_text(path: str, text: str) -> None:
    """Write atomically: a reader never sees half a file, and a failure leaves no temp file."""
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=".%s." % os.path.basename(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # as open() would have made it, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
