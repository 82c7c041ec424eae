"""Static findings judged for what the candidate wrote, not for what the repository already had.

Real repositories carry lint and type findings no candidate introduced, and trusted test files
laid over the candidate (``--tests-from``) are not the candidate's code. A hard finding halts a
gate only when it is the candidate's own:

* a finding B already had is a warning. Findings are matched by file, code, message and the
  enclosing function or class -- not by line, since a patch shifts every line below it -- and by
  count: two identical findings where B had one leave one new;
* a finding in a trusted file is a warning.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Collection, Sequence

from pytest_evidence.model import Finding
from runner.diff import Span, definitions

Key = tuple[str, str | None, str, str]


def enclosing(spans: Sequence[Span], line: int | None) -> str:
    """The innermost function or class holding ``line`` (``<module>`` outside every one)."""
    holders = [s for s in spans if line is not None and s.start <= line <= s.end]
    return max(holders, key=lambda s: s.start).qualname if holders else "<module>"


def _spans(read: Callable[[str], str | None], path: str, cache: dict[str, list[Span]]) -> list[Span]:
    if path not in cache:
        text = read(path)
        try:
            cache[path] = definitions(text) if text is not None else []
        except (SyntaxError, ValueError):
            cache[path] = []
    return cache[path]


#: mypy codes that say what the target environment lacks (an optional dependency not installed,
#: a package without stubs), not what the candidate wrote: an import that fails at run time is
#: the import probe's to judge. The rest of such a file is typed against ``Any`` where the module
#: should be -- "returning Any", an ignore that is now unused (svcs 26.1.0's optional aiohttp
#: integration) -- so every mypy finding in it is the environment's too.
ENVIRONMENT_CODES = frozenset({"import-not-found", "import-untyped", "import"})


def _demoted(finding: Finding, why: str) -> Finding:
    return Finding(
        finding.check,
        finding.path,
        finding.line,
        finding.column,
        finding.code,
        "%s (%s)" % (finding.message, why),
        False,
    )


def judge(
    candidate: Sequence[Finding],
    baseline: Sequence[Finding],
    read_candidate: Callable[[str], str | None],
    read_baseline: Callable[[str], str | None],
    trusted: Collection[str] = (),
) -> list[Finding]:
    """``candidate``'s findings with every hard one that is not the candidate's own demoted."""
    c_spans: dict[str, list[Span]] = {}
    b_spans: dict[str, list[Span]] = {}
    known: collections.Counter[Key] = collections.Counter(
        (f.path, f.code, f.message, enclosing(_spans(read_baseline, f.path, b_spans), f.line)) for f in baseline
    )
    lacking = {f.path for f in candidate if f.check == "mypy" and f.code in ENVIRONMENT_CODES}
    judged = []
    for finding in candidate:
        if finding.hard and finding.path in trusted:
            finding = _demoted(finding, "in a trusted file, not the candidate's")
        elif finding.hard and finding.check == "mypy" and finding.path in lacking:
            why = "the file imports a module the target environment lacks; the import probe judges imports"
            finding = _demoted(finding, why)
        elif finding.hard:
            key = (
                finding.path,
                finding.code,
                finding.message,
                enclosing(_spans(read_candidate, finding.path, c_spans), finding.line),
            )
            if known[key] > 0:
                known[key] -= 1
                finding = _demoted(finding, "also on the baseline")
        judged.append(finding)
    return judged
