"""Items that share a node id, told apart: the second and later of an id are ``ID[#N]``.

pytest lets a collector give several items one node id -- docopt-ng's names every case of a
usage example ``testcases(N)`` -- and everything here selects, streams, stores and compares by
id. Folded into one result per id, a sibling failing on B hid another's regression, and one
failing on both sides made an honest fix of another a "no-fix" (a review's probes). Numbered in
the order pytest collects them, as each is collected (before any plugin reorders the items), the
same files give the same ids in every process, on B and on C: each item is compared with itself.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

from typing import Dict, List

import pytest


class DistinctIds:
    """Registered in every active session, workers included (each collects for itself)."""

    def __init__(self) -> None:
        self._first: Dict[str, pytest.Item] = {}
        self._seen: Dict[str, int] = {}
        self._again: List[pytest.Item] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_itemcollected(self, item: pytest.Item) -> None:
        nodeid = item.nodeid
        first = self._first.setdefault(nodeid, item)
        if first is item:
            return
        if first.parent is not item.parent and _id_of(first.parent) == _id_of(item.parent):
            # The same collector made again: one file reached through two of the session's
            # arguments (a directory the operator named, and the file the runner names). The
            # same test, collected twice; it runs once, as a plain pytest of either runs it.
            self._again.append(item)
            return
        count = self._seen[nodeid] = self._seen.get(nodeid, 1) + 1
        _rename(item, "%s[#%d]" % (nodeid, count))

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: List[pytest.Item]) -> None:
        if self._again:
            again = {id(item) for item in self._again}
            items[:] = [item for item in items if id(item) not in again]
            config.hook.pytest_deselected(items=self._again)


def _id_of(node: object) -> object:
    return None if node is None else getattr(node, "nodeid", None)


def _rename(item: pytest.Item, nodeid: str) -> None:
    """Give ``item`` the id ``nodeid``, through what is behind ``Node.nodeid`` in this pytest: a
    string before pytest 9.2, a ``NodeId`` from then on. Where neither is there, the items keep
    sharing the id, and their results fold (``Observation.and_then``)."""
    if isinstance(getattr(item, "_nodeid", None), str):
        setattr(item, "_nodeid", nodeid)  # noqa: B010 - pytest's own attribute, not in its types
        return
    parse = getattr(type(getattr(item, "_id", None)), "parse", None)
    if parse is not None:
        setattr(item, "_id", parse(nodeid))  # noqa: B010
