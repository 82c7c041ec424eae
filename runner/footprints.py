"""The referee's own marks on a test process, as library code can read them.

``blindness.detects_test_run`` names library code that asks whether pytest runs it. The referee
leaves marks of its own beside pytest's, and an independent check certified a no-fix candidate
switched on by each of these, under the referee and nowhere else: the handler its per-test
timeout gives ``SIGALRM`` (``signal.getsignal``), a network namespace with loopback only
(``socket.if_nameindex``), the runner as the parent process (``os.getppid``, its
``/proc/<pid>/cmdline``), checkouts under the temporary directory (``os.getcwd()`` matched against
``tempfile.gettempdir()``), a home directory of its own (``~/.cache`` missing), pytest's recording
of each test's warnings (``warnings._showwarnmsg_impl``), and a deeper call stack
(``len(inspect.stack())`` compared); and hooks that watch the process's events
(``sys.addaudithook``, ``sys.settrace``), where a test run's imports show (one audit hook waited
for a module named ``tests``). Each function here says which mark an expression reads, or None;
``detects_test_run`` names the line.

These rules list ways of writing a read; the marks are properties of the process, readable in
more ways than a list holds. A third review certified twenty more, with no name the rules could
hold without naming honest code: the pinned hash seed read off ``hash("x")``, the parent-death
signal by ``prctl``, ``/proc/self/status``, the stack's depth by recursion, ``len(sys.modules)``,
the root logger's handlers, ``pdb.set_trace.__module__``; and objects of a plain class with a
lenient ``__eq__``, or answers found in the test module's own tables through ``sys.modules``.
The seeds and the parent-death signal are answered as a class: one further stability run per
side changes them (``Sandbox.vary``), and a fresh test that gives another outcome there is not
evidence, however the patch read them. The per-test timeout's ``SIGALRM`` handler stays (a real
fix's racy test failed without it), and with what every pytest run shows (its modules, the
stack's depth, the root logger's handlers, the network namespace, the runner as parent) stays
these rules'; the types of what a reproducer compares, checked as it runs, are not built.

Honest library code reads some of these: a daemon asking for its parent, shellingham finding
the shell that started it (``os.path.join("/proc", str(pid), "cmdline")``), one that looks for a
dotfile in the home directory. A fix changing such lines is INCONCLUSIVE with the finding's
words, for a reviewer to read -- the price of not certifying the fix a test run switches on. A
review's honest shapes are left alone: another signal's handler asked for (asyncio's
``SIGINT``), the process's own ``/proc/self/exe`` and thread names, ``warnings._filters_mutated``
(numpy.testing restores filters so), a loop counting frames for a warning's ``stacklevel``
(pandas' ``find_stack_level``, which looks at each frame it climbs; a loop that only counts
the frames is named). Not caught: a mark read through a helper or a variable bound elsewhere than
the function or module that compares it, the home directory through any variable (``kept``),
``sys._getframe(25)`` failing, ``psutil``, ``/proc`` paths built from parts that are not
literals (``"/pr" + "oc"``), the public ``warnings.filters``, a home
directory named through a setting.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from pytest_evidence import syntax
from runner import pyscan

#: Calls that read a mark of the referee's test run whatever their arguments.
CALLS = {
    "signal.getsignal": "asks which handler SIGALRM has: the referee's per-test timeout gives it one",
    "signal.getitimer": "asks for the interval timer, which the referee's per-test timeout sets",
    "socket.if_nameindex": "asks which network interfaces exist: the referee's tests run with loopback only",
    "os.getppid": "asks for its parent process, which is the test runner in a test run",
    # hooks that watch what the process does: a test run's imports and calls show there
    **dict.fromkeys(
        ("sys.addaudithook", "sys.settrace", "sys.setprofile", "threading.settrace", "threading.setprofile"),
        "watches the process's events, where a test run's imports and calls show",
    ),
}
#: What a process's entry in ``/proc`` tells of what started it: any process's command line,
#: environment and status (its parent, the signals it handles: a review's read the per-test
#: timeout's ``SIGALRM`` there), another's name and program (the process's own are honest to
#: read: its interpreter, its threads' names); and the network namespace's interfaces
#: (``/proc/net/dev``, ``/proc/self/net/dev``).
_PROC_FIELDS = frozenset({"cmdline", "environ", "status"})
_PROC_OTHERS = frozenset({"comm", "exe"})
#: The signal the referee's per-test timeout handles, and its timer, as the code names them.
_ALARM = frozenset({"signal.SIGALRM", "signal.Signals.SIGALRM", "signal.ITIMER_REAL"})
#: Calls that replace the timeout's handler or timer, and answer what was there.
REPLACING = frozenset({"signal.signal", "signal.setitimer", "signal.alarm"})
#: Where the process runs from: its working directory, and its own module's file (a review's).
_CWD = frozenset({"os.getcwd", "os.getcwdb", "pathlib.Path.cwd", "__file__"})
_TEMP = frozenset({"tempfile.gettempdir", "tempfile.gettempdirb", "tempfile.tempdir"})
_TEMP_PREFIXES = ("/tmp", "/var/tmp", "/var/folders")
_TEMP_VARIABLES = frozenset({"TMPDIR", "TEMP", "TMP"})
_HOME = frozenset({"os.path.expanduser", "pathlib.Path.home"})
_HOME_VARIABLES = frozenset({"HOME", "USERPROFILE"})
_STACK = frozenset(
    {
        *("inspect.stack", "inspect.trace", "inspect.getouterframes", "inspect.getinnerframes"),
        *("traceback.extract_stack", "traceback.format_stack", "traceback.walk_stack"),
    }
)
#: Calls and methods that match one path against another.
_PATH_MATCHERS = frozenset({"startswith", "endswith", "relative_to", "is_relative_to", "find", "index", "count"})
_PATH_FUNCTIONS = frozenset({"os.path.commonpath", "os.path.commonprefix", "os.path.relpath"})


def _names(node: ast.AST, aliases: dict[str, str]) -> set[str]:
    """The dotted names ``node`` reads or calls, through the file's imports."""
    return {pyscan.canonical(sub, aliases) for sub in syntax.walk(node) if isinstance(sub, (ast.Name, ast.Attribute))}


def _strings(node: ast.AST) -> list[str]:
    """The string literals in ``node``, in the order the source has them."""
    found = [s for s in syntax.walk(node) if isinstance(s, ast.Constant) and isinstance(s.value, str)]
    return [str(s.value) for s in sorted(found, key=lambda s: (s.lineno, s.col_offset))]


def proc_path(node: ast.expr) -> str | None:
    """``node`` a string naming what ``/proc`` tells of a process's start (``"/proc/%d/cmdline"``,
    an f-string of it, ``/proc/self/status``) or of the network namespace (``/proc/net/dev``), as
    its literal parts spell it, joined as a path (``os.path.join("/proc", "self", "cmdline")``,
    ``Path("/proc") / pid / "status"``: a review's); else None."""
    joined = re.sub("/+", "/", "/".join(_strings(node)))
    if not joined.startswith("/proc/"):
        return None
    parts = joined.replace("%", "/").split("/")
    others = not _PROC_OTHERS.isdisjoint(parts) and parts[2:3] != ["self"]
    if not _PROC_FIELDS.isdisjoint(parts) or others or "net" in parts[2:4]:
        return joined
    return None


def alarm(node: ast.AST | None, aliases: dict[str, str]) -> bool:
    """Whether ``node``, a signal or timer argument, may be the timeout's: ``SIGALRM``,
    ``ITIMER_REAL``, 14, or anything computed; not another signal by its name."""
    if node is None:
        return True
    name = pyscan.canonical(node, aliases)
    if name:
        return name in _ALARM or not name.startswith("signal.")
    return not isinstance(node, ast.Constant) or node.value == 14


def called_mark(node: ast.Call, name: str, aliases: dict[str, str], used: bool) -> bool:
    """Whether the call ``node`` of ``name`` reads a mark: ``getsignal`` of the timeout's signal,
    ``signal``/``setitimer``/``alarm`` on it whose answer (what was there) is ``used``."""
    first = node.args[0] if node.args else None
    if name == "signal.getsignal":
        return alarm(first, aliases)
    if name in REPLACING:
        return used and (name == "signal.alarm" or alarm(first, aliases))
    return True


def compared(node: ast.Compare | ast.Call, aliases: dict[str, str]) -> str | None:
    """What a comparison, or a match of one path against another, reads of the referee's marks:
    the working directory against the temporary directory, the depth of the stack against a
    number."""
    if isinstance(node, ast.Call):
        given = {pyscan.canonical(a.func if isinstance(a, ast.Call) else a, aliases) for a in node.args}
        temp = given & _TEMP or any(_temp_string(a) for a in node.args if isinstance(a, ast.Constant))
        if given & _CWD and temp:  # ``_under(os.getcwd(), tempfile.gettempdir())``: a helper of the file's
            return (
                "hands where it runs from and the temporary directory, where the referee's checkouts are, to one call"
            )
        func = node.func
        matching = isinstance(func, ast.Attribute) and func.attr in _PATH_MATCHERS
        if not (matching or pyscan.canonical(func, aliases) in _PATH_FUNCTIONS):
            return None
    names = _names(node, aliases)
    here = names & _CWD or _reads_home(node, names)  # where it runs from, or its home directory
    if here and (names & _TEMP or _temp_string(node)):
        return "matches where it runs from against the temporary directory, where the referee's checkouts are"
    if isinstance(node, ast.Compare) and any(_stack_size(side, aliases) for side in [node.left, *node.comparators]):
        return "compares the depth of the call stack, which a test runner makes deeper"
    return None


def _reads_home(node: ast.AST, names: set[str]) -> bool:
    """``os.environ["HOME"]``, ``os.getenv("HOME")``: the home directory by its variable."""
    return bool(names & {"os.environ", "os.getenv"}) and not _HOME_VARIABLES.isdisjoint(_strings(node))


def _temp_string(node: ast.AST) -> bool:
    strings = _strings(node)
    return any(s.startswith(_TEMP_PREFIXES) for s in strings) or not _TEMP_VARIABLES.isdisjoint(strings)


#: What a name bound to the stack's depth stands for, in ``aliases`` (``kept``).
STACK_SIZE = "len:inspect.stack"


def kept(statements: Iterable[ast.AST], aliases: dict[str, str]) -> dict[str, str]:
    """Names the ``statements`` bind to a mark before it is compared -- ``depth =
    len(inspect.stack())``, ``here = os.getcwd()``, ``tmp = tempfile.gettempdir()`` -- each as
    the mark it holds, to read through ``aliases`` (a review's ``depth`` kept first). The home
    directory is not followed so: honest code keeps it to look for its configuration there."""
    found = {}
    for node in statements:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        names = _names(node.value, aliases)
        if _stack_size(node.value, aliases):
            found[node.targets[0].id] = STACK_SIZE
        elif names & _TEMP:
            found[node.targets[0].id] = sorted(names & _TEMP)[0]
        elif names & _CWD - {"__file__"}:
            found[node.targets[0].id] = sorted(names & _CWD)[0]
    return found


def _stack_size(node: ast.AST, aliases: dict[str, str]) -> bool:
    """``len(inspect.stack())``, ``len(traceback.extract_stack()[2:])``: the stack's depth; a name
    ``kept`` for it."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id) == STACK_SIZE
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and node.args):
        return False
    return any(isinstance(sub, ast.Call) and pyscan.canonical(sub.func, aliases) in _STACK for sub in syntax.walk(node))


def home_path(asked: ast.AST, aliases: dict[str, str]) -> bool:
    """Whether the path an existence check asks about is in the home directory: built from
    ``os.path.expanduser``, ``Path.home()``, a path's ``expanduser()`` or the ``HOME`` variable."""
    names = _names(asked, aliases)
    if names & _HOME or _reads_home(asked, names):
        return True
    # ``Path("~/.cache").expanduser()``: a method of a path made on the spot
    return any(isinstance(sub, ast.Attribute) and sub.attr in ("expanduser", "home") for sub in syntax.walk(asked))


def counts_frames(loop: ast.While | ast.For) -> bool:
    """A loop that climbs the whole stack (``frame = frame.f_back``) counting as it goes (``n +=
    1``) and nothing else: the stack's depth, measured (a check's cheat compared it with 20). A
    loop that looks at the frames it climbs -- pandas' ``find_stack_level`` stops at the first
    file outside the package, for a warning's ``stacklevel``; a ``findCaller``-like loop tests
    each frame's module; boltons' ``tbutils`` hands each frame to a call -- has an ``if``, a
    ``break``, a call or a test that reads the frame, and is not this; nor is rich's, which
    counts down a fixed number of frames to skip."""
    body = [sub for stmt in loop.body for sub in syntax.walk(stmt)]
    steps = any(
        isinstance(s, ast.Assign) and isinstance(s.value, ast.Attribute) and s.value.attr == "f_back" for s in body
    )
    test = list(syntax.walk(loop.test)) if isinstance(loop, ast.While) else []
    looks = any(isinstance(s, (ast.If, ast.IfExp, ast.Break, ast.Return, ast.Call)) for s in body) or any(
        isinstance(s, (ast.Attribute, ast.Call))
        for s in test  # ``while frame.f_globals.get(...) == ...``
    )
    counts = any(isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add) for s in body)
    return steps and counts and not looks


#: What pytest's recording of each test's warnings puts in place (``catch_warnings(record=True)``).
WARNING_HOOKS = frozenset({"warnings._showwarnmsg_impl", "warnings._showwarnmsg"})


def private_warnings(node: ast.Attribute, aliases: dict[str, str]) -> str | None:
    """``warnings._showwarnmsg_impl``: what pytest's recording of each test's warnings replaces."""
    name = pyscan.canonical(node, aliases)
    if name in WARNING_HOOKS:
        return "reads %s, which pytest replaces to record each test's warnings" % name
    return None
