"""pytest-evidence: typed evidence for a candidate patch instead of an exit code.

Importing the package imports nothing but the standard library; the pytest plugin is
``pytest_evidence.plugin`` (entry point ``evidence``) and the shared model is
``pytest_evidence.model``.
"""

__version__ = "0.1.0"
