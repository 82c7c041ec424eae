"""Who wrote what is found in a test framework's place: the file the runner attributes it to
(``Authorship.origin``), and whether one of the watched frameworks made it itself
(``Authorship.made_by_frameworks``: pytest 7.4 and pytest-asyncio add fixtures of their own to a
``TestCase`` a test module imports by name).

The runner tells by the file whether the candidate's own files wrote a replacement
(``replaces_test_framework``, REJECTED) or B's side cannot say whose code did
(``framework_replaced_unattributed``, INCONCLUSIVE). An object can claim a file it was not
written in -- a code object's ``co_filename`` rewritten, a class's ``__module__`` set -- so a
claim on a framework's own file holds only for what the frameworks' modules held when they were
taken (``originals``), or code nested in it; anything else there, and anything the referee
cannot read a file from (a callable instance, a builtin), is ``UNATTRIBUTABLE``, which the
runner charges to the candidate. Told by exact types, so that no code of the object's runs here.

pytest and the standard library only, in Python 3.8 syntax (it runs in old target environments).

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set

if TYPE_CHECKING:
    from pytest_evidence.originals import Originals

#: What a replacement no file can be read from is attributed to; the runner charges it to C.
UNATTRIBUTABLE = "<unattributable>"

#: How many wrappers deep an object is unwrapped (a partial of a bound method of a fixture...).
_DEPTH = 8


class Authorship:
    """What the frameworks' modules held when taken, read once it is first asked for (and again
    once a framework module has been taken since): most sessions never ask."""

    def __init__(self, originals: Originals) -> None:
        self._originals = originals
        self._read = -1  # how many namespaces the sets below were read from
        self._codes: Set[int] = set()
        self._values: Set[int] = set()
        self._files: Set[str] = set()
        self._wrapper_types: Dict[str, Any] = {}  # pytest's fixture wrappers, by what they hold

    def origin(self, now: Any) -> str:
        """The file ``now`` was written in, or ``UNATTRIBUTABLE``: through wrappers, the first
        function not written in the frameworks (a fixture pytest wraps around the candidate's
        function is the candidate's), else what is innermost."""
        self._known()
        layers = self._layers(now)
        for layer in layers:
            if type(layer) is types.FunctionType and id(layer.__code__) not in self._codes:
                return self._claim(layer.__code__.co_filename, False)
        inner = layers[-1]
        kind = type(inner)
        if kind is types.FunctionType:
            return self._claim(inner.__code__.co_filename, True)
        if issubclass(kind, type):
            return self._claim(_file(sys.modules.get(vars(inner).get("__module__") or "")), id(inner) in self._values)
        if issubclass(kind, types.ModuleType):
            return self._claim(_file(inner), id(inner) in self._values)
        return UNATTRIBUTABLE

    def made_by_frameworks(self, value: Any) -> bool:
        """Whether ``value`` is the frameworks' own through and through: each function it wraps
        written in them (a fixture pytest or pytest-asyncio makes for a class it collects; not
        one pytest wraps around the candidate's function)."""
        self._known()
        layers = self._layers(value)
        return type(layers[-1]) is types.FunctionType and all(
            id(layer.__code__) in self._codes for layer in layers if type(layer) is types.FunctionType
        )

    def _claim(self, claimed: Optional[str], held: bool) -> str:
        """``claimed`` stands unless it is a framework's own file and the object is none the
        frameworks held (or code nested in theirs)."""
        if claimed is None or (claimed in self._files and not held):
            return UNATTRIBUTABLE
        return claimed

    def _layers(self, value: Any) -> List[Any]:
        """``value`` and what it wraps, outermost first: a descriptor's function, a partial's,
        pytest's fixture definition's and fixture wrapper's, ``functools.wraps``' ``__wrapped__``."""
        layers = [value]
        for _ in range(_DEPTH):
            kind = type(value)
            if kind in (classmethod, staticmethod, types.MethodType):
                value = value.__func__
            elif kind is property:
                value = value.fget if value.fget is not None else value.fset
            elif kind in (functools.partial, functools.partialmethod):
                value = value.func
            elif kind is self._wrapper_types.get("FixtureFunctionDefinition"):
                value = vars(value).get("_fixture_function")
            elif kind is types.FunctionType and "__pytest_wrapped__" in vars(value):
                wrapper = vars(value)["__pytest_wrapped__"]
                if type(wrapper) is not self._wrapper_types.get("_PytestWrapper"):
                    return layers
                value = vars(wrapper).get("obj")
            elif kind is types.FunctionType and "__wrapped__" in vars(value):
                value = vars(value)["__wrapped__"]
            else:
                return layers
            layers.append(value)
        return layers

    def _known(self) -> None:
        namespaces = self._originals.everything
        if self._read == len(namespaces):
            return
        for namespace in namespaces[max(self._read, 0) :]:
            self._values.update(map(id, namespace.values))
            stack = list(namespace.code)
            while stack:
                code = stack.pop()
                if id(code) not in self._codes:
                    self._codes.add(id(code))
                    stack.extend(c for c in code.co_consts if type(c) is types.CodeType)
            if namespace.name in ("_pytest.fixtures", "_pytest.compat"):
                for key in ("FixtureFunctionDefinition", "_PytestWrapper"):
                    if key in namespace.keys:
                        self._wrapper_types[key] = namespace.values[namespace.keys.index(key)]
        for module in self._originals.modules.values():
            self._values.add(id(module))
            claimed = _file(module)
            if claimed is not None:
                self._files.add(claimed)
        self._read = len(namespaces)


def _file(module: Any) -> Optional[str]:
    if not issubclass(type(module), types.ModuleType):
        return None
    claimed = vars(module).get("__file__")
    return claimed if type(claimed) is str else None
