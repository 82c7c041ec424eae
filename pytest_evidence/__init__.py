"""pytest-evidence: typed evidence for a candidate patch instead of an exit code.

Importing the package imports nothing but the standard library; the pytest plugin is
``pytest_evidence.plugin`` (entry point ``evidence``) and the shared model is
``pytest_evidence.model``.

PYTEST_DONT_REWRITE: pytest marks every module of a plugin it loads from an entry point for
assertion rewriting. In a session with no bytecode cache to read (``PYTHONDONTWRITEBYTECODE`` set,
a read-only install) it then parses each module into Python objects and compiles the tree, and,
unless this marker is in the module's docstring, walks the tree for asserts to rewrite first.
The plugin's few asserts are its own checks and need no rewritten messages: every module of the
package carries the marker.
"""

__version__ = "0.1.0"
