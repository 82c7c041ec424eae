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

from typing import Dict

import pytest


class DistinctIds:
    """Registered in every active session, workers included (each collects for itself)."""

    def __init__(self) -> None:
        self._seen: Dict[str, int] = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_itemcollected(self, item: pytest.Item) -> None:
        nodeid = item.nodeid
        count = self._seen[nodeid] = self._seen.get(nodeid, 0) + 1
        if count > 1:
            _rename(item, "%s[#%d]" % (nodeid, count))


def _rename(item: pytest.Item, nodeid: str) -> bool:
    """Give ``item`` the id ``nodeid``, through what is behind ``Node.nodeid`` in this pytest: a
    string before pytest 9.2, a ``NodeId`` from then on. Whether it took: where it cannot, the
    items keep sharing the id, and their results fold (``Observation.and_then``)."""
    if isinstance(getattr(item, "_nodeid", None), str):
        setattr(item, "_nodeid", nodeid)  # noqa: B010 - pytest's own attribute, not in its types
    else:
        parse = getattr(type(getattr(item, "_id", None)), "parse", None)
        if parse is None:
            return False
        setattr(item, "_id", parse(nodeid))  # noqa: B010
    return item.nodeid == nodeid
