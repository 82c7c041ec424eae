"""What a finished evidence record becomes for its readers: a terminal summary, an HTML page, a
Markdown summary, JUnit XML, SWE-bench's lists and report.

Every export reads the record and nothing else -- no store, no checkout, no network -- so a record
copied off a CI machine renders the same anywhere, and what a page shows is what the record says.
"""

from __future__ import annotations

import json
import pathlib

from pytest_evidence.errors import BadInput
from pytest_evidence.model import EvidenceRecord


def load_record(path: pathlib.Path, option: str) -> EvidenceRecord:
    """The evidence record at ``path``; a file that is not one is bad input, in one line."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadInput("%s %s: %s" % (option, path, exc.strerror or exc)) from None
    except ValueError as exc:
        raise BadInput("%s %s is not JSON: %s" % (option, path, exc)) from None
    if isinstance(doc, dict) and doc.get("testexec") == "pytestbool":
        raise BadInput("%s %s is a naive (pytestbool) record: it holds no evidence to render" % (option, path))
    try:
        return EvidenceRecord.from_dict(doc)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BadInput("%s %s is not an evidence record: %s" % (option, path, exc)) from None
