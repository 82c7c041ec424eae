"""The harness-side runner: ``evidence-runner``. Imports the shared model, never the plugin.

The package installs down to Python 3.8, where the plugin runs inside old target environments;
the runner itself needs 3.10. Below that, importing it -- the console script's first step --
ends with one line and the missing-tool exit code (2) rather than a ``SyntaxError`` from some
module of 3.10 syntax. This file is therefore in Python 3.8 syntax.
"""

import sys

if sys.version_info < (3, 10):  # noqa: UP036 - the point: this file runs on older Pythons
    sys.stderr.write(
        "evidence-runner: the runner needs Python 3.10 or newer, this is %d.%d: install "
        "'pytest-evidence[runner]' in an environment of its own and point --python at this one "
        "[missing-tool]\n" % sys.version_info[:2]
    )
    raise SystemExit(2)
