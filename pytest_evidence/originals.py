"""The test frameworks' own objects as they were before any code under test ran, and which of
them something replaced since.

The runner's source scan rejects library code that writes onto a test framework's objects
(``patches_test_framework``), but only the spellings it can read: reviews certified no-fix
candidates whose library code replaced ``asyncio.Runner.run`` or ``TestCase.assertEqual`` with
``type.__setattr__``, ``setattr`` and a name built at run time, or ``exec``. What every such
spelling leaves is the same: the object in the framework's namespace is no longer the one that
was there. So a runner test process takes every function, class, descriptor and module that the
watched frameworks' modules and the classes they define hold, each function's code and defaults,
each class's bases, and the exception classes of ``builtins``: those imported already before its
first conftest (after the plugins pytest loads, pytest-asyncio's included), and any imported later
as soon as its own code has run (``Originals``). It looks again at all of them once collection --
every import of the code under test at collection time -- is over, and at those every test runs
through (``ON_THE_CALL_PATH``) once each test's teardown is over: a replacement a test leaves is
seen before the next one runs, and in whichever process ran that test (B's suite run may be
spread over xdist workers, C's session is one process: both see it). Once the last test's
teardown is over it looks at all of them again, so that B's runs vouch for what their tests
replace for good anywhere (``nest_asyncio.apply()`` in a ``setUp``). What differs goes on that
test's stream (``FrameworkWatch``: from an xdist worker on the teardown report) and into
the stream, with the file what is in its place was written in (``authorship``); the runner compares
C's names with B's, like for like: one only C shows is an attack, unless B's side cannot say
whose code replaced it (``judge.framework_replacements`` in the runner).

What it does not see (reviews' cheats among them): a replacement made and undone within one
test, or made during a test outside ``ON_THE_CALL_PATH`` and undone before the last test is over;
a method added to a class made of the frameworks' own code with globals or closure cells of the
candidate's (``authorship`` takes it for theirs); a name that held data (``None``) when taken and
a callable later (``_pytest.doctest.RUNNER_CLASS``); a watched module whose loader
is an import hook of the code under test (it runs first, and is taken as it left the module);
a hook implementation registered on pytest's plugin manager (or added to a hook's list) by code
that found it through ``gc``; a tracer (``sys.settrace``) that rewrites what pytest saw; a test
module's own globals (``AssertionError`` rebound there); a closure's cells; code that finds what
was taken in the process's memory and rewrites it, or replaces what looks. A module reloaded
(``importlib.reload``) is said to be replaced throughout, on B as on C.

pytest and the standard library only, in Python 3.8 syntax (it runs in old target environments).

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import builtins
import operator
import sys
import types
from typing import Any, Callable, Dict, Generator, Iterator, List, Optional, Set, Tuple

import pytest

from pytest_evidence.authorship import Authorship
from pytest_evidence.reports import REPLACED_ATTR

#: The packages whose objects run or judge every test -- pyscan's ``TEST_FRAMEWORKS`` and the
#: async test runners of ``ASYNC_TEST_RUNNERS``.
WATCHED = frozenset(
    {"_pytest", "pytest", "pluggy", "unittest", "doctest", "asyncio", "pytest_asyncio", "anyio", "pytest_trio"}
)

#: The namespaces every test's own call runs through -- a module's (class None) or a class's --
#: looked at after each test: cheap enough for that (a few hundred entries and functions).
ON_THE_CALL_PATH = frozenset(
    {
        ("asyncio.runners", None),
        ("asyncio.runners", "Runner"),
        ("asyncio.base_events", "BaseEventLoop"),
        ("unittest.case", "TestCase"),
        ("unittest.async_case", "IsolatedAsyncioTestCase"),
        ("_pytest.runner", None),
        ("_pytest.runner", "CallInfo"),
        ("_pytest.python", "Function"),
        ("pluggy._callers", None),
        ("pytest_asyncio.plugin", None),
        ("anyio.pytest_plugin", None),
        ("pytest_trio.plugin", None),
    }
)

_GONE = object()


def _kept(value: Any) -> bool:
    """What is compared: code and types (functions, classes, descriptors), never data -- a
    framework's module caches and settings change as it runs. Modules count: code looks up
    ``sys`` or ``functools`` through the name its module bound (a review's cheat replaced
    ``unittest.case.sys`` so that ``exc_info()`` hid the failure)."""
    return callable(value) or isinstance(value, (staticmethod, classmethod, property, types.ModuleType))


def _exception(value: Any) -> bool:
    """What is compared of ``builtins``: the exception classes, which every test framework
    raises and catches by name (a review's cheat made ``AssertionError`` one that ``unittest``
    reads as a request to stop quietly). Not its functions: honest code replaces ``open`` or
    ``print`` (pyfakefs, a test's capture) and the comparison with B would have to hold them."""
    return isinstance(value, type) and issubclass(value, BaseException)


class _Namespace:
    """One module's or class's namespace and what it held at the snapshot: each object, and for
    each function among them (a method's, a property's accessors) its code and defaults -- a
    function kept in place with its ``__code__`` swapped is replaced too (a review's cheat)."""

    __slots__ = (
        "bases",
        "code",
        "every_key",
        "functions",
        "keys",
        "kw",
        "live",
        "name",
        "of",
        "owner",
        "pos",
        "size",
        "values",
    )

    def __init__(self, name: str, owner: Any, kept_if: Callable[[Any], bool] = _kept) -> None:
        self.name = name
        self.owner = owner  # a module, or a class: whose ``__bases__`` count too (a mixin put in)
        self.bases = getattr(owner, "__bases__", None) if isinstance(owner, type) else None
        live = self.live = vars(owner)  # the module's dict, or the class's mapping proxy: both live views
        kept = [(key, value) for key, value in live.items() if kept_if(value)]
        self.keys = tuple(key for key, _ in kept)
        self.values = tuple(value for _, value in kept)
        inner = [(key, f) for key, value in kept for f in _functions(value)]
        self.of = tuple(key for key, _ in inner)
        self.functions = tuple(f for _, f in inner)
        self.code = tuple(f.__code__ for f in self.functions)
        self.pos = tuple(f.__defaults__ for f in self.functions)
        self.kw = tuple(f.__kwdefaults__ for f in self.functions)
        self.size = len(live)
        self.every_key = frozenset(live)

    def replaced(self, made_by_frameworks: Callable[[Any], bool], thorough: bool) -> List[Tuple[str, Any]]:
        """Each name found replaced, and what is in its place now. By identity, never by ``==``:
        a replacement's own ``__eq__`` would answer for it. Compared in C (``map``) first: this
        runs after every test. A class's keys are told apart from the snapshot's by their count
        after each test, and one by one when ``thorough`` (collection's end, the last test's):
        a method added where a data attribute was deleted leaves the count as it was."""
        live = self.live
        found: List[str] = []
        if self.bases is not None and self.owner.__bases__ is not self.bases:
            found.append("__bases__")
        if not all(map(operator.is_, map(live.get, self.keys), self.values)):
            found = [k for k, v in zip(self.keys, self.values) if live.get(k, _GONE) is not v]  # noqa: B905
        functions = self.functions
        if not (
            all(map(operator.is_, map(_CODE, functions), self.code))
            and all(map(operator.is_, map(_POS, functions), self.pos))
            and all(map(operator.is_, map(_KW, functions), self.kw))
        ):
            found += [
                key
                for key, f, code, pos, kw in zip(self.of, functions, self.code, self.pos, self.kw)  # noqa: B905
                if f.__code__ is not code or f.__defaults__ is not pos or f.__kwdefaults__ is not kw
            ]
        if self.bases is not None and (len(live) != self.size or (thorough and not self.every_key.issuperset(live))):
            found += self._added(made_by_frameworks)
        bases = self.owner.__bases__ if self.bases is not None else None
        return [
            ("%s.%s" % (self.name, key), bases if key == "__bases__" else live.get(key)) for key in dict.fromkeys(found)
        ]

    def _added(self, made_by_frameworks: Callable[[Any], bool]) -> List[str]:
        """A method added to a class, whether it replaces an inherited one (``__init_subclass__``,
        a base's ``run``) or is one a framework reads where it is there (pytest runs a
        ``TestCase``'s ``setup_method``; a property ``outcome`` on ``TestReport``: two cheats of
        a review) -- unless the frameworks made it themselves: pytest 7.4 and pytest-asyncio add
        fixtures to each ``TestCase`` class a test module imports by name (another review saw
        them taken for replacements)."""
        known = set(self.keys)
        return [
            key
            for key, value in list(self.live.items())
            if key not in known and _kept(value) and not made_by_frameworks(value)
        ]


_CODE = operator.attrgetter("__code__")
_POS = operator.attrgetter("__defaults__")
_KW = operator.attrgetter("__kwdefaults__")


def _functions(value: Any) -> List[Any]:
    """The Python functions behind a namespace's entry, whose code can be swapped in place."""
    if isinstance(value, (classmethod, staticmethod)):
        value = value.__func__
    found = [value.fget, value.fset, value.fdel] if isinstance(value, property) else [value]
    return [f for f in found if isinstance(f, types.FunctionType)]


class Originals:
    """The snapshot, and what was found replaced since (each name once).

    A watched module imported later -- by pytest as it collects doctests, by a test, by the code
    under test itself -- is taken as soon as its own code has run, before the importer goes on
    (``_Finder``, first on ``sys.meta_path``): code that imports ``asyncio`` and replaces one of
    its objects on the next line has replaced what was taken. One that turns up in
    ``sys.modules`` without having passed there (the finder taken off the path first) is said
    to be replaced as a whole."""

    def __init__(self) -> None:
        self.modules: Dict[str, Any] = {"builtins": builtins}
        exceptions = _Namespace("builtins", builtins, _exception)
        self.everything: List[_Namespace] = [exceptions]
        self.on_the_call_path: List[_Namespace] = [exceptions]
        self.found: Set[str] = set()
        self.pending: List[List[Optional[str]]] = []
        self.authorship = Authorship(self)
        self.take(None)
        self.finder = _Finder(self)
        sys.meta_path.insert(0, self.finder)

    def close(self) -> None:
        """The session is over: its finder leaves the import path (another session of the
        process, pytester's, takes its own)."""
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)

    def take(self, just_run: Optional[str]) -> None:
        """Take every watched module not taken yet whose code has run: those pytest and its
        plugins imported, or ``just_run`` (its import is not over until the finder returns)
        and what it imported."""
        for name, module in list(sys.modules.items()):
            if name in self.modules or not _watched(name, module):
                continue
            if name != just_run and _running(module):
                continue  # a package whose ``__init__`` is still running: taken once it is over
            self.modules[name] = module
            for namespace in _namespaces(name, module):
                self.everything.append(namespace)
                if (name, namespace.name[len(name) + 1 :] or None) in ON_THE_CALL_PATH:
                    self.on_the_call_path.append(namespace)

    def look(self, at: str, everything: bool = False) -> None:
        """Look again (``everything``, or only what every test runs through); what is newly
        found replaced waits in ``pending``, marked ``at``."""
        namespaces = self.everything if everything else self.on_the_call_path
        made = self.authorship.made_by_frameworks
        found = [replaced for namespace in namespaces for replaced in namespace.replaced(made, everything)]
        if everything:
            found += [
                (name, sys.modules.get(name))
                for name, module in self.modules.items()
                if sys.modules.get(name) is not module
            ]
            found += [
                (name, module)
                for name, module in list(sys.modules.items())
                if name not in self.modules and _watched(name, module) and not _running(module)
            ]
        for name, now in found:
            if name not in self.found:
                self.found.add(name)
                self.pending.append([name, at, self.authorship.origin(now)])

    def take_pending(self) -> Optional[List[List[Optional[str]]]]:
        """What was found since the last call: each name, when (``collection`` or ``test``), and
        where what is in its place was written (``Authorship.origin``)."""
        if not self.pending:
            return None
        pending, self.pending = self.pending, []
        return pending


class _Finder:
    """First on ``sys.meta_path``: a watched module is found by the finders after it, and its
    loader is wrapped so that the module is taken once its code has run (``_Taking``)."""

    def __init__(self, originals: Originals) -> None:
        self.originals = originals

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name.partition(".")[0] not in WATCHED or self not in sys.meta_path:
            return None
        for finder in sys.meta_path[sys.meta_path.index(self) + 1 :]:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Taking(spec.loader, self.originals)
                return spec
        return None


class _Taking:
    """A loader's stand-in while one watched module runs; the module keeps the loader itself."""

    def __init__(self, loader: Any, originals: Originals) -> None:
        self._loader = loader
        self._originals = originals

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._originals.take(module.__name__)


def _watched(name: str, module: Any) -> bool:
    return name.partition(".")[0] in WATCHED and module is not None and hasattr(module, "__dict__")


def _running(module: Any) -> bool:
    """Whether ``module``'s own code is still running (its import is not over)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _namespaces(name: str, module: Any) -> Iterator[_Namespace]:
    """A module's namespace and each class's it defines (not those it imports from elsewhere)."""
    yield _Namespace(name, module)
    for value in list(vars(module).values()):
        if isinstance(value, type) and getattr(value, "__module__", None) == name:
            qualname = getattr(value, "__qualname__", value.__name__)
            if "<" not in qualname:  # not a class made inside a function
                yield _Namespace("%s.%s" % (name, qualname), value)


#: Where what a look found goes, with the teardown report of the test it was found after.
HandOver = Callable[[pytest.TestReport, List[List[Optional[str]]]], None]


def on_the_report(report: pytest.TestReport, found: List[List[Optional[str]]]) -> None:
    """An xdist worker's hand-over: on the report, which the controller's recorder streams (only
    B's suite run is spread over workers, and it runs no code of the candidate's)."""
    setattr(report, REPLACED_ATTR, found)


class FrameworkWatch:
    """The plugin object of a runner test process (a serial session or an xdist worker): looks
    at everything once collection is over, at what every test runs through once each test's
    teardown is over (at everything once the last test's is), and hands what it found over
    (``hand_over``): straight to the recorder in a serial session -- a report's attribute is what
    code under test can take (a review's cheat made it a property on ``TestReport`` that dropped
    what was set) -- and on the report from a worker."""

    def __init__(self, originals: Originals, hand_over: HandOver) -> None:
        self.originals = originals
        self.hand_over = hand_over
        self.last = False

    def pytest_collection_finish(self) -> None:
        self.originals.look("collection", everything=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, nextitem: Optional[pytest.Item]) -> None:
        self.last = nextitem is None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
        outcome = yield
        if call.when == "teardown":
            self.originals.look("test", everything=self.last)
            found = self.originals.take_pending()
            if found is not None:
                self.hand_over(outcome.get_result(), found)
