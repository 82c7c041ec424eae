"""``--evidence-select FILE``: run exactly the listed node ids, deselecting the rest.

Baseline runs and the runner pass long lists of node ids; on the command line an id that does
not exist on B (a parametrisation that changed, a test the candidate added to a file B lacks)
would abort the whole run with a usage error. Listed ids that are not collected are simply not
run, and the caller sees them as unreported.
"""

from __future__ import annotations

from typing import List, Set

import pytest


class Selector:
    def __init__(self, path: str) -> None:
        with open(path, encoding="utf-8") as fh:
            self.wanted: Set[str] = {line.strip() for line in fh if line.strip()}

    def pytest_collection_modifyitems(self, config: pytest.Config, items: List[pytest.Item]) -> None:
        keep = [i for i in items if i.nodeid in self.wanted]
        drop = [i for i in items if i.nodeid not in self.wanted]
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
