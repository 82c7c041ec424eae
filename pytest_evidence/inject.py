"""A private copy of this package, to put on another interpreter's ``sys.path``.

The plugin runs inside interpreters that do not have it installed (the runner's ``--python``
targets, the plugin's own replay on B). Putting the directory that holds ``pytest_evidence`` on
their ``PYTHONPATH`` is wrong as soon as the package is installed from a wheel: that directory is
a whole ``site-packages``, and the target would import the runner's pytest and plugins instead of
its own. What goes on the path is a directory holding this package and nothing else.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import os
import shutil

#: How a child pytest loads this plugin, whether or not the package is installed there: by
#: module path, with the entry point name blocked (where the target has the package installed
#: too, loading both would register the same module twice).
INJECT_PLUGIN = ("-p", "no:evidence", "-p", "pytest_evidence.plugin")

#: How a child pytest starts: like ``python -m pytest`` but without the working directory at the
#: head of ``sys.path``, so that nothing in a checkout -- a ``pytest_evidence`` package of its own,
#: a ``pytest`` or ``hmac`` module -- is imported in place of the plugin's private copy or what it
#: relies on; the checkout's import roots come from ``PYTHONPATH``, after the copy.
#: ``pytest.main()``, not the ``console_main`` the ``pytest`` script calls: pytest 9.2 deprecates
#: calling that one and pytest 10 removes it.
PYTEST_LAUNCH = ("-c", "import sys; del sys.path[0]; import pytest; raise SystemExit(pytest.main())")

#: How the runner's record-mode processes start: as ``PYTEST_LAUNCH``, and they end without
#: tearing down the interpreter's objects (``quickexit``). A plain run (the naive judge) keeps
#: ``PYTEST_LAUNCH``.
RECORD_LAUNCH = ("-c", "import sys; del sys.path[0]; from pytest_evidence.quickexit import main; main()")

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def private_copy(dest: str) -> str:
    """Copy the package's modules and schema into ``dest/pytest_evidence``, and the subprocess
    carrier as ``dest/sitecustomize.py``; return ``dest``."""
    target = os.path.join(dest, "pytest_evidence")
    os.makedirs(target, exist_ok=True)
    for name in sorted(os.listdir(_PACKAGE)):
        if name.endswith((".py", ".json")):
            shutil.copyfile(os.path.join(_PACKAGE, name), os.path.join(target, name))
    shutil.copyfile(os.path.join(_PACKAGE, "carrier.py"), os.path.join(dest, "sitecustomize.py"))
    return dest
