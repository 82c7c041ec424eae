"""The referee's own marks on a test process, as library code can read them.

``blindness.detects_test_run`` names library code that asks whether pytest runs it. The referee
leaves marks of its own beside pytest's, and an independent check certified a no-fix candidate
switched on by each of these, under the referee and nowhere else: the handler its per-test
timeout gives ``SIGALRM`` (``signal.getsignal``), a network namespace with loopback only
(``socket.if_nameindex``), the runner as the parent process (``os.getppid``, its
``/proc/<pid>/cmdline``), checkouts under the temporary directory (``os.getcwd()`` matched against
``tempfile.gettempdir()``), a home directory of its own (``~/.cache`` missing), pytest's recording
of each test's warnings (``warnings._showwarnmsg_impl``), and a deeper call stack (frames counted,
``len(inspect.stack())`` compared); and hooks that watch the process's events
(``sys.addaudithook``, ``sys.settrace``), where a test run's imports show (one audit hook waited
for a module named ``tests``). Each function here says which mark an expression reads, or None;
``detects_test_run`` names the line.

Honest library code reads some of these: a library that chains signal handlers, a daemon asking
for its parent, one that looks for a dotfile in the home directory. A fix changing such lines is
INCONCLUSIVE with the finding's words, for a reviewer to read -- the price of not certifying the
fix a test run switches on. Not caught: a mark read through a variable or a helper outside the
changed lines, ``psutil``, ``/proc`` paths built from parts that are not literals, a home
directory named through a setting.
"""

from __future__ import annotations

import ast

from pytest_evidence import syntax
from runner import pyscan

#: Calls that read a mark of the referee's test run whatever their arguments.
CALLS = {
    "signal.getsignal": "asks which handler a signal has: the referee's per-test timeout gives SIGALRM one",
    "signal.getitimer": "asks for the interval timer, which the referee's per-test timeout sets",
    "socket.if_nameindex": "asks which network interfaces exist: the referee's tests run with loopback only",
    "os.getppid": "asks for its parent process, which is the test runner in a test run",
    # hooks that watch what the process does: a test run's imports and calls show there
    **dict.fromkeys(
        ("sys.addaudithook", "sys.settrace", "sys.setprofile", "threading.settrace", "threading.setprofile"),
        "watches the process's events, where a test run's imports and calls show",
    ),
}
#: What a process's entry in ``/proc`` tells of what started it.
_PROC_FIELDS = frozenset({"cmdline", "environ", "comm", "exe"})
_CWD = frozenset({"os.getcwd", "os.getcwdb", "pathlib.Path.cwd"})
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
    return [s.value for s in syntax.walk(node) if isinstance(s, ast.Constant) and isinstance(s.value, str)]


def proc_path(node: ast.expr) -> str | None:
    """``node`` a string naming what ``/proc`` tells of a process's start (``"/proc/%d/cmdline"``,
    an f-string of it), as its literal parts spell it; else None."""
    parts = _strings(node)
    joined = "".join(parts)
    if joined.startswith("/proc/") and not _PROC_FIELDS.isdisjoint(joined.replace("%", "/").split("/")):
        return joined
    return None


def compared(node: ast.Compare | ast.Call, aliases: dict[str, str]) -> str | None:
    """What a comparison, or a match of one path against another, reads of the referee's marks:
    the working directory against the temporary directory, the depth of the stack against a
    number."""
    if isinstance(node, ast.Call):
        func = node.func
        matching = isinstance(func, ast.Attribute) and func.attr in _PATH_MATCHERS
        if not (matching or pyscan.canonical(func, aliases) in _PATH_FUNCTIONS):
            return None
    names = _names(node, aliases)
    if names & _CWD and (names & _TEMP or _temp_string(node)):
        return "matches the working directory against the temporary directory, where the referee's checkouts are"
    if isinstance(node, ast.Compare) and any(_stack_size(side, aliases) for side in [node.left, *node.comparators]):
        return "compares the depth of the call stack, which a test runner makes deeper"
    return None


def _temp_string(node: ast.AST) -> bool:
    strings = _strings(node)
    return any(s.startswith(_TEMP_PREFIXES) for s in strings) or not _TEMP_VARIABLES.isdisjoint(strings)


def _stack_size(node: ast.AST, aliases: dict[str, str]) -> bool:
    """``len(inspect.stack())``, ``len(traceback.extract_stack()[2:])``: the stack's depth."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and node.args):
        return False
    return any(isinstance(sub, ast.Call) and pyscan.canonical(sub.func, aliases) in _STACK for sub in syntax.walk(node))


def home_path(asked: ast.AST, aliases: dict[str, str]) -> bool:
    """Whether the path an existence check asks about is in the home directory: built from
    ``os.path.expanduser``, ``Path.home()``, a path's ``expanduser()`` or the ``HOME`` variable."""
    if _names(asked, aliases) & _HOME:
        return True
    if any(isinstance(sub, ast.Attribute) and sub.attr in ("expanduser", "home") for sub in syntax.walk(asked)):
        return True  # ``Path("~/.cache").expanduser()``: a method of a path made on the spot
    strings = _strings(asked)
    return not _HOME_VARIABLES.isdisjoint(strings) and any(
        isinstance(sub, (ast.Name, ast.Attribute)) and pyscan.canonical(sub, aliases) in ("os.environ", "os.getenv")
        for sub in syntax.walk(asked)
    )


def private_warnings(node: ast.Attribute, aliases: dict[str, str]) -> str | None:
    """``warnings._showwarnmsg_impl`` and the module's other private names: what pytest's
    recording of each test's warnings replaces, and nothing an honest library reads."""
    name = pyscan.canonical(node, aliases)
    if name.startswith("warnings._") and name.count(".") == 1 and not name.endswith("__"):
        return "reads %s, which pytest replaces to record each test's warnings" % name
    return None


def counts_frames(loop: ast.While | ast.For) -> bool:
    """A loop that steps up the stack (``frame = frame.f_back``) and counts as it goes (``n += 1``):
    the stack's depth, measured."""
    body = [sub for stmt in loop.body for sub in syntax.walk(stmt)]
    steps = any(
        isinstance(s, ast.Assign) and isinstance(s.value, ast.Attribute) and s.value.attr == "f_back" for s in body
    )
    return steps and any(isinstance(s, ast.AugAssign) for s in body)
