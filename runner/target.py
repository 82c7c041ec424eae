"""The target environment: the interpreter the repository's tests run with.

Often old and never ours: nothing is installed into it. The plugin (and the shared model) are
made importable by putting a private copy of ``pytest_evidence`` -- that package and nothing
else -- on ``PYTHONPATH``, and loaded with ``-p no:evidence -p pytest_evidence.plugin`` (the
``no:`` keeps an installed copy from registering twice). The runner's own ``site-packages`` never
goes on the target's path: the target's tests run with the target's pytest and plugins. The
checkout's own source roots come first on the path, so the code under test is the checkout's.
"""

from __future__ import annotations

import compileall
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_evidence.environment import capture, versions
from pytest_evidence.errors import BadInput, MissingTool
from pytest_evidence.inject import PYTEST_LAUNCH, private_copy
from pytest_evidence.model import Environment
from runner import dist_stamp, leases
from runner.meanwhile import Meanwhile

#: Distributions whose pytest plugins pin a test run (per-test timeout, seeded randomness), and
#: their modules: the runner's own copies go into a target that lacks them (``runner.sandbox``).
GUARD_MODULES = {"pytest-timeout": "pytest_timeout", "pytest-randomly": "pytest_randomly"}
GUARD_DISTRIBUTIONS = list(GUARD_MODULES)
#: Distributions seeded through their own pytest option where the target has them (never injected).
SEEDED_DISTRIBUTIONS = ["hypothesis"]
#: Asked of the target along with the guards: what B's suite run may be parallelised with.
PROBED_DISTRIBUTIONS = [*GUARD_DISTRIBUTIONS, *SEEDED_DISTRIBUTIONS, "pytest-xdist"]

#: A path no repository has: pytest parses its arguments, then finds nothing to collect there.
_NOWHERE = "__evidence_no_such_path__"

#: The oldest pytest the plugin supports in a target.
MIN_PYTEST = (7, 0)

#: One probe per interpreter path for the life of the process, asked again when its stamp moved.
_PROBED: dict[str, Probed] = {}
#: Held while a probe is asked: one thread probes, the others wait for its answer.
_PROBING = threading.Lock()
_INJECTED: list[str] = []
#: Where the runner's copy of each guard distribution lies, beside the plugin's private copy.
_GUARD_COPIES: dict[str, str] = {}

#: argv: a JSON list of distributions, and a JSON ``{distribution: [module, directory]}`` of the
#: runner's guard copies. Compiles the plugin's copy and the guard copies (test processes before
#: T3 write no bytecode), and tries each copy whose distribution the target lacks, from its own
#: directory ahead of the installed packages, where the test processes would put it: ``refused``
#: says why each that does not import there does not. One interpreter start for both, as the
#: test processes import them together.
_PROBE = (
    "import compileall, importlib, json, os, sys\n"
    "del sys.path[0]\n"  # the working directory (-c): what it holds is not the target's
    "compileall.compile_dir(os.environ['PYTHONPATH'], quiet=2)\n"
    "try:\n"
    "    import pytest\n"
    "except ImportError as exc:\n"
    "    print(json.dumps({'pytest': None, 'error': str(exc)})); sys.exit(0)\n"
    "import pytest_evidence.environment as e\n"
    "guards = e.versions(json.loads(sys.argv[1]))\n"
    "answer = {'pytest': pytest.__version__, 'environment': e.capture().to_dict(), 'guards': guards,"
    " 'executable': sys.executable, 'path': [os.path.abspath(p) for p in sys.path], 'refused': {}}\n"
    "for name, (module, where) in sorted(json.loads(sys.argv[2]).items()):\n"
    "    if guards.get(name, 'absent') != 'absent':\n"
    "        continue\n"
    "    sys.path.insert(1, where)\n"
    "    try:\n"
    "        importlib.import_module(module)\n"
    "    except BaseException as exc:\n"
    "        answer['refused'][module] = '%s: %s' % (type(exc).__name__, str(exc).replace('\\n', ' '))\n"
    "print(json.dumps(answer))\n"
)


@dataclass(frozen=True)
class Probed:
    """What a target said about itself: its fingerprint, its guard plugins' versions, the stamp
    of where its distributions were read from (``dist_stamp``), and why each of the runner's
    guard copies it was given to try does not import there (``refused``: module -> error)."""

    environment: Environment
    guards: dict[str, str]
    executable: str
    path: tuple[str, ...]
    stamp: dist_stamp.Stamp
    refused: dict[str, str]

    @classmethod
    def taken(
        cls,
        environment: Environment,
        guards: dict[str, str],
        executable: str,
        path: Sequence[str],
        refused: dict[str, str] | None = None,
    ) -> Probed:
        """Stamped as it answers: a later stamp that differs says the installation moved since."""
        stamp = dist_stamp.stamp(executable, path)
        return cls(environment, guards, executable, tuple(path), stamp, dict(refused or {}))

    def moved(self) -> bool:
        return dist_stamp.stamp(self.executable, self.path) != self.stamp


def plugin_root() -> str:
    """The private copy of ``pytest_evidence`` for this runner process (removed at exit, or by
    the next runner's if this one is killed), with the runner's guard copies beside it
    (``guard_copies``)."""
    if not _INJECTED:
        root = private_copy(str(leases.for_process("evidence-plugin-")))
        _GUARD_COPIES.update(_copy_guards(pathlib.Path(root) / "guard-copies"))
        _INJECTED.append(root)
    return _INJECTED[0]


def guard_copies() -> dict[str, str]:
    """The directory holding the runner's copy of each guard distribution it has: one directory
    each, so that a test process's path holds the copies in force and no other. They lie under
    the plugin's private copy, in directories no import can name (``guard-copies/pytest-timeout``),
    so that the probe compiles them with it and finds them ready for the target."""
    plugin_root()
    return dict(_GUARD_COPIES)


def _copy_guards(into: pathlib.Path) -> dict[str, str]:
    found = {}
    for distribution, module in GUARD_MODULES.items():
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            continue  # the runner lacks it too: nothing to copy (``sandbox`` says so)
        origin, where = pathlib.Path(spec.origin), into / distribution
        where.mkdir(parents=True, exist_ok=True)
        if origin.name == "__init__.py":
            shutil.copytree(origin.parent, where / origin.parent.name, dirs_exist_ok=True)
        else:
            shutil.copy2(origin, where / origin.name)
        found[distribution] = str(where)
    return found


@dataclass(frozen=True)
class Target:
    python: str
    pythonpath: tuple[str, ...]  # relative to a checkout; "" is the checkout root
    pytest_args: tuple[str, ...]

    def roots(self, checkout: pathlib.Path) -> list[pathlib.Path]:
        """The checkout's import roots, in order: the declared ones, or the root plus ``src/``."""
        if self.pythonpath:
            return [checkout / p if p else checkout for p in self.pythonpath]
        found = [checkout]
        if (checkout / "src").is_dir():
            found.append(checkout / "src")
        return found

    def relative_roots(self, checkout: pathlib.Path) -> list[str]:
        """The import roots as repository-relative paths ("" for the checkout itself)."""
        return [str(r.relative_to(checkout)) if r != checkout else "" for r in self.roots(checkout)]

    def env(self, checkout: pathlib.Path, bytecode: bool = False) -> dict[str, str]:
        """The environment of a process in the target: the plugin's private copy first (nothing
        in the checkout can stand in for it), then the checkout's roots.

        ``bytecode``: the process writes its bytecode, as plain pytest does -- in practice into
        the ``__pycache__`` of the runner's temporary worktrees, the code a test process finds
        uncompiled (``_probed`` compiles the plugin's copy, installers the environment). Test
        sessions do: each of a certify's dozen sessions on a checkout would otherwise compile its
        sources and rewrite its test modules again (about 0.5 s a process on click). The probes
        before T3 do not, so that each side's first session starts from a tree as git made it.
        """
        env = dict(os.environ)
        # PYTHONSAFEPATH (3.11+) would leave the working directory off ``sys.path``, and the
        # launch's ``del sys.path[0]`` would then drop the plugin's private copy instead.
        for noisy in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTHONSTARTUP", "PYTHONSAFEPATH"):
            env.pop(noisy, None)
        paths = [plugin_root()] + [str(r) for r in self.roots(checkout)]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(paths)
        if bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def check(self) -> None:
        """Fail fast, before any tier: an interpreter that is not there, or cannot run the plugin."""
        self._exists()
        self._forget_if_moved()
        self._probed()

    def check_meanwhile(self) -> Meanwhile[Probed]:
        """``check``, its probe (an interpreter start, about 0.4 s) in a thread beside the
        checkouts and the tiers before T2, the first to need what it says. Whatever needs it
        waits for it (``_probed`` holds a lock), and the call returned raises what it raised:
        certify calls it before anything it reports, so an interpreter that cannot run the plugin
        stays bad input, said before any other."""
        self._exists()
        plugin_root()  # made here, once: the probe and the pytest-arguments check would race to make it
        self._forget_if_moved()
        return Meanwhile("target-probe", self._probed)

    def _forget_if_moved(self) -> None:
        """A certify starts: a probe whose inputs moved since it was taken is asked again, by
        whoever needs it first. A candidate that uninstalled pytest leaves its own record the
        probe from before (``environment_after_tests``), and the next certify a missing tool.
        Dropped here, in the caller's thread, before anything of the certify can ask."""
        with _PROBING:
            known = _PROBED.get(self.python)
            if known is not None and known.moved():
                del _PROBED[self.python]

    def _exists(self) -> None:
        if shutil.which(self.python) is None:
            found = [p for p in ("bin/python", "Scripts/python.exe") if os.path.isfile(os.path.join(self.python, p))]
            if found:  # a venv named, not its interpreter
                raise MissingTool("--python %s is a directory: give its interpreter, %s" % (self.python, found[0]))
            raise MissingTool("--python %s: no such interpreter" % self.python)

    def check_pytest_args(self, where: Callable[[], pathlib.Path]) -> None:
        """The operator's pytest arguments, tried on B's checkout (``where`` makes it, asked only
        when there are arguments to try) before any tier.

        pytest parses them (and loads the repository's configuration and conftests) and is then
        pointed at a path that does not exist, so nothing is collected or run. When that fails
        with the arguments and not without them, the arguments are the operator's mistake, said
        in pytest's own words.
        """
        if not self.pytest_args:
            return
        distributing = next((a for a in self.pytest_args if _distributes(a)), None)
        if distributing is not None:
            raise BadInput(
                "pytest argument %s: the runner chooses its own processes (one session per side; --jobs N for"
                " B's suite run): leave pytest-xdist's options out" % distributing
            )
        checkout = where()
        refused = self._refusal(checkout, self.pytest_args)
        if refused and not self._refusal(checkout, ()):
            raise BadInput("pytest refuses the arguments %s: %s" % (" ".join(self.pytest_args), refused))

    def check_pytest_args_meanwhile(self, where: Callable[[], pathlib.Path]) -> Meanwhile[None]:
        """``check_pytest_args`` beside the static tiers: B's checkout and a pytest start on the
        second core instead of before T0. The climb waits for it before its first test process,
        and certify again before a record is written, so bad arguments stay bad input even for a
        patch a static tier rejected."""
        return Meanwhile("pytest-args-check", lambda: self.check_pytest_args(where))

    def _refusal(self, checkout: pathlib.Path, args: Sequence[str]) -> str | None:
        """pytest's complaint about ``args`` before it looks for tests, or None."""
        proc = subprocess.run(
            [self.python, *PYTEST_LAUNCH, *args, "-p", "no:cacheprovider", "--collect-only", "-q", _NOWHERE],
            cwd=checkout,
            capture_output=True,
            text=True,
            errors="replace",
            env=self.env(checkout),
            timeout=300,
        )
        if "not found: %s" % _NOWHERE in proc.stderr + proc.stdout:
            return None
        lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        # argparse names its program first, which depends on how pytest was started: left out.
        argparse_said = [ln.split(": error: ", 1)[1] for ln in lines if ": error: " in ln]
        pytest_said = [ln for ln in lines if ln.startswith("ERROR:") and not ln.startswith("ERROR: usage:")]
        said = argparse_said or pytest_said
        return said[0] if said else (lines or ["pytest exited %d" % proc.returncode])[-1]

    def environment(self) -> Environment:
        """Fingerprint of the target interpreter's installed environment (the checkout left out).

        The runner's own interpreter is fingerprinted in-process (tens of milliseconds instead of
        an interpreter start).
        """
        return self._probed().environment

    def environment_after_tests(self) -> tuple[Environment, str | None]:
        """The environment measured again after candidate code ran, and why it could not be.

        Measured again only if something the measurement reads moved (``dist_stamp``). A target
        the candidate's tests left unable to answer (pytest uninstalled, say) is not a missing
        tool but the candidate's doing, judged as drift: the environment last measured comes back
        with the target's complaint, and the probe kept is that one (the next certify asks again).
        """
        with _PROBING:
            known = _PROBED.get(self.python)
            if known is not None and known.moved():
                try:
                    _PROBED[self.python] = self._asked()
                except MissingTool as exc:
                    return known.environment, str(exc)
        return self.environment(), None

    def guard_versions(self) -> dict[str, str]:
        """The installed version of each guard plugin, and of each seeded distribution, in the
        target, or ``absent``."""
        probed = self._probed().guards
        return {name: probed.get(name, "absent") for name in (*GUARD_DISTRIBUTIONS, *SEEDED_DISTRIBUTIONS)}

    def guard_refusal(self, module: str) -> str | None:
        """Why the runner's copy of the guard ``module``, tried by the probe, does not import in
        the target; None when it does."""
        return self._probed().refused.get(module)

    def search_path(self) -> tuple[str, ...]:
        """The target's ``sys.path`` as its probe saw it (the plugin's private copy on it)."""
        return self._probed().path

    @property
    def executable(self) -> str:
        """The target's ``sys.executable``: the interpreter ``python`` names."""
        return self._probed().executable

    @property
    def has_xdist(self) -> bool:
        return self._probed().guards.get("pytest-xdist", "absent") != "absent"

    def _probed(self) -> Probed:
        """The target's fingerprint and guard versions, asked once per interpreter (and again
        once what it read moved: ``_forget_if_moved``).

        The probe also byte-compiles the plugin's private copy for that interpreter: the processes
        before T3 write no bytecode (``env``), and a certify's first test sessions start together,
        so without it each of them compiled the plugin from source (about 0.1 s each).
        """
        with _PROBING:
            if self.python not in _PROBED:
                _PROBED[self.python] = self._asked()
            return _PROBED[self.python]

    def _asked(self) -> Probed:
        if os.path.abspath(self.python) != os.path.abspath(sys.executable):
            return self._probe()
        compileall.compile_dir(plugin_root(), quiet=2)
        path = [os.path.abspath(p) for p in sys.path]
        return Probed.taken(capture(), versions(PROBED_DISTRIBUTIONS), sys.executable, path)

    def _probe(self) -> Probed:
        """Ask the target itself, with nothing on its path but the plugin's private copy."""
        env = dict(os.environ, PYTHONPATH=plugin_root())
        for misleading in ("PYTHONHOME", "PYTHONSAFEPATH"):
            env.pop(misleading, None)
        try:
            proc = subprocess.run(
                [
                    self.python,
                    "-c",
                    _PROBE,
                    json.dumps(PROBED_DISTRIBUTIONS),
                    json.dumps({d: [GUARD_MODULES[d], where] for d, where in guard_copies().items()}),
                ],
                capture_output=True,
                text=True,
                env=env,
                cwd=tempfile.gettempdir(),
                timeout=120,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise MissingTool("--python %s cannot be started: %s" % (self.python, exc)) from None
        try:
            answer = json.loads(proc.stdout.strip().splitlines()[-1])
            assert isinstance(answer, dict)
        except (IndexError, ValueError, AssertionError):
            said = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise MissingTool(
                "--python %s is not a Python that can run the plugin (exit %d: %s)"
                % (self.python, proc.returncode, said)
            ) from None
        try:
            return self._answered(answer)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # something else spoke last
            raise MissingTool(
                "--python %s answered the probe with something it does not say (%s: %s)"
                % (self.python, type(exc).__name__, exc)
            ) from None

    def _answered(self, answer: dict[str, Any]) -> Probed:
        if answer["pytest"] is None:
            raise MissingTool(
                "--python %s has no pytest (%s): install pytest %d.%d or newer there"
                % (self.python, answer["error"], *MIN_PYTEST)
            )
        if _release(answer["pytest"]) < MIN_PYTEST:
            raise MissingTool(
                "--python %s has pytest %s; the plugin needs %d.%d or newer"
                % (self.python, answer["pytest"], *MIN_PYTEST)
            )
        environment = Environment.from_dict(answer["environment"])
        guards, refused = dict(answer["guards"]), dict(answer["refused"])
        return Probed.taken(environment, guards, answer["executable"], answer["path"], refused)


#: pytest-xdist's options that distribute a session (``-n`` also attached: ``-n2``, ``-nauto``).
_DISTRIBUTING = frozenset({"-n", "--numprocesses", "--dist", "-d", "--distload", "--tx", "--maxprocesses"})


def _distributes(arg: str) -> bool:
    """Whether an operator's pytest argument asks pytest-xdist to distribute the session: the
    runner's sessions run their groups in order in one process, and xdist's workers would not."""
    return arg.split("=", 1)[0] in _DISTRIBUTING or (arg.startswith("-n") and not arg.startswith("--"))


def _release(version: str) -> tuple[int, int]:
    parts = [*version.split("."), "0"][:2]
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)
    except ValueError:
        return (0, 0)
