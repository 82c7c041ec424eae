"""A defect of the runner is one line on stderr; its traceback goes to a file the line names.

A harness reads stderr as a message, not as a stack: exit 4 and one line say "this is our bug",
and the file keeps everything a bug report needs.
"""

from __future__ import annotations

import os
import tempfile
import traceback


def write(exc: BaseException) -> str:
    """Write ``exc``'s traceback to a new file in the temporary directory; return its path."""
    fd, path = tempfile.mkstemp(prefix="evidence-runner-traceback-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    return path
