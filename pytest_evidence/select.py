"""``--evidence-select FILE``: run exactly the listed node ids, in the listed order, deselecting the rest.

Baseline runs and the runner pass long lists of node ids; on the command line an id that does
not exist on B (a parametrisation that changed, a test the candidate added to a file B lacks)
would abort the whole run with a usage error. Listed ids that are not collected are simply not
run, and the caller sees them as unreported.

The list's order is the run's order, whatever order collection (or pytest-randomly) produced: a
flip seen on C is confirmed on B in the C run's own order, and the runner hands B the ids in
the order C ran them.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

from typing import Dict, List

import pytest


class Selector:
    def __init__(self, path: str) -> None:
        with open(path, encoding="utf-8") as fh:
            listed = [line.strip() for line in fh if line.strip()]
        self.rank: Dict[str, int] = {test_id: rank for rank, test_id in reversed(list(enumerate(listed)))}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: List[pytest.Item]) -> None:
        keep = sorted((i for i in items if i.nodeid in self.rank), key=lambda i: self.rank[i.nodeid])
        drop = [i for i in items if i.nodeid not in self.rank]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
