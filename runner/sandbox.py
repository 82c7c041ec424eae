"""``pin_environment``: every test process of a climb runs the same way on B and on C.

* No network: a fresh network namespace per process where the machine allows one
  (``netns``), with the plugin's socket guard inside it as the detector; the guard alone
  (``socket_guard``) where it does not. The record says which held.
* No evidence store: its directory covered by an empty one in each test process (``netns``'s
  mount namespace), where the machine allows it; else ``missing`` says the store is in reach.
* No writing installed code or the repository: the target's and the runner's code and the
  user's work tree and git directory (``read_only_view``) read-only in each test process, in the
  same namespace; else ``missing`` says they can be written.
* Seeded randomness: ``PYTHONHASHSEED`` and pytest-randomly's per-test reseeding with one
  recorded seed (test order kept: ``--randomly-dont-reorganize``), identical on B and C.
* A scrubbed environment: no proxy variables, no ``PYTEST_ADDOPTS`` or plugin autoload switches,
  a temporary ``HOME`` per process, and a temporary directory (``TMPDIR``) of its own for every
  process but the first of C's code: what one process leaves there, no other finds.
* Per-test timeouts with pytest-timeout (``timeout``, distinct from ``fail``); the process
  limit is the tier's budget.
* T3's first run on each side with the referee's own marks changed (``Sandbox.vary``): C's code
  runs without them before it runs anywhere with them.

The target interpreter may lack pytest-timeout or pytest-randomly. The runner then copies its own
into a private directory on the target's ``PYTHONPATH`` and loads it with ``-p`` (no entry point
to collide with, since the target has none), after checking the copy declares support for the
target's Python and imports there. Where that fails the guarantee is listed under ``missing`` --
never silently dropped.
"""

from __future__ import annotations

import ctypes
import fnmatch
import hashlib
import importlib.metadata
import json
import os
import pathlib
import resource
import signal
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from packaging.specifiers import SpecifierSet

import pytest_evidence
from pytest_evidence import gitops
from pytest_evidence.seedless_children import HASHSEED_NOT_INHERITED
from runner import netns
from runner.target import GUARD_MODULES, Target, guard_copies, plugin_root

#: What ``missing`` says where installed code is not read-only in the test processes.
WRITABLE = (
    "read-only installed code and repository: test processes can write the target's and the runner's packages"
    " and the repository"
)
DEFAULT_SEED = 20261130
DEFAULT_TEST_TIMEOUT = 60.0

PROXY_VARIABLES = tuple(
    name
    for base in ("http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy")
    for name in (base, base.upper())
)
SCRUBBED = (
    *PROXY_VARIABLES,
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "PYTEST_XDIST_WORKER",
    "PYTHONSTARTUP",
    "PYTHONBREAKPOINT",
)


#: Lock and requirements files: what CI would install. Their digest is part of the fingerprint.
LOCKFILES = (
    "requirements*.txt",
    "requirements/*.txt",
    "constraints*.txt",
    "Pipfile.lock",
    "poetry.lock",
    "uv.lock",
    "pdm.lock",
)


def lockfile_digest(repo: str, commit: str) -> str:
    """sha256 over the path and blob of every lock or requirements file in ``commit``."""
    digest = hashlib.sha256()
    for path, blob in sorted(gitops.blobs(repo, commit).items()):
        if any(fnmatch.fnmatch(path, pattern) for pattern in LOCKFILES):
            digest.update(("%s\0%s\n" % (path, blob)).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


@dataclass(frozen=True)
class Guard:
    """A pytest plugin distribution that pins one property of a run."""

    distribution: str
    module: str
    name: str  # the pytest11 entry point name, what ``-p no:NAME`` switches off
    guarantee: str
    args: Callable[[Sandbox], list[str]]


GUARDS = (
    Guard(
        "pytest-timeout",
        GUARD_MODULES["pytest-timeout"],
        "timeout",
        "per-test timeout",
        lambda s: ["--timeout=%g" % s.test_timeout, "--timeout-method=signal"] if s.test_timeout else [],
    ),
    Guard(
        "pytest-randomly",
        GUARD_MODULES["pytest-randomly"],
        "randomly",
        "seeded randomness per test",
        lambda s: ["--randomly-seed=%d" % s.run_seed, "--randomly-dont-reorganize"],
    ),
)


#: Plugins seeded where the target has them installed, never injected: a suite without them has
#: nothing they would seed. Hypothesis draws its examples from an unseeded ``Random`` and replays
#: a failure from the example database it keeps in the working tree, so B and C drew different
#: examples and C's reruns replayed a failure B never saw -- an honest fix of a public project
#: was REJECTED in two of five identical certifies. A forced seed draws the same examples on
#: both sides, in every run, and leaves the database out.
SEEDED = (
    Guard(
        "hypothesis",
        "_hypothesis_pytestplugin",
        "hypothesispytest",
        "seeded property-based examples",
        lambda s: ["--hypothesis-seed=%d" % s.run_seed],
    ),
)


@dataclass(frozen=True)
class Sandbox:
    """How the test processes of one climb run; ``pytest_args``, ``environ`` and ``preexec`` apply it.

    ``loaded``: the guard plugins in force (installed in the target, or ``injected`` from the
    runner's own copies, whose directories are ``shim``); ``plugins`` and ``missing`` say so in
    the record.
    """

    seed: int
    test_timeout: float | None
    tier_budget: float | None
    network: str
    loaded: tuple[Guard, ...] = ()
    injected: tuple[Guard, ...] = ()
    shim: tuple[str, ...] = ()
    plugins: Mapping[str, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    memory: int | None = None  # bytes of address space per test process (the audit's mutants); None: no cap
    hidden: tuple[str, ...] = ()  # directories each test process sees empty (``netns.enter``): the store's
    in_reach: str | None = None  # why the evidence store is not hidden, listed in ``missing`` (not in ``identity``)
    bytecode: str | None = None  # bytecode kept between certifies, covered here (``runner.compiled``); None: none
    serial: bool = False  # pytest-xdist loads in the target: ``-n 0`` on every session, whatever addopts ask
    read_only: tuple[str, ...] = ()  # directories each test process cannot write (``read_only_view``)
    writable: str | None = None  # why they are not read-only, listed in ``missing`` (not in ``identity``)
    varied_seed: int | None = None  # the referee's own marks changed, and this the seed (``vary``)

    @property
    def unmet(self) -> tuple[str, ...]:
        """Every guarantee not given, one line each: ``missing``, the store in reach, installed
        code that can be written."""
        return (*self.missing, *filter(None, [self.in_reach, self.writable]))

    @property
    def pinned(self) -> bool:
        """False only for the A/B harness's ablation: no seed, no network guard, nothing scrubbed."""
        return self.network != OPEN

    def vary(self, seed: int) -> Sandbox:
        """This sandbox with marks the referee leaves in its test processes changed: another seed
        (``PYTHONHASHSEED``, pytest-randomly's and Hypothesis's), no parent-death signal. T3's
        first run on each side runs so (``Sides.first_box``), before any of C's code runs with
        the marks: a patch switched on by reading them -- ``hash("x")``, ``prctl``, however
        spelled, where the static rules (``runner.footprints``) name spellings -- is off there,
        and cannot have left itself a file saying it was on; an honest test gives the outcome it
        gives under plain pytest, which draws the seeds anew and asks for no signal.

        The per-test timeout stays: without it (or with pytest-timeout's thread method) a real
        fix's racy reproducer -- click's pager test, racing ``cat`` against ``terminate()`` --
        failed in a varied run one certify in three, and it never did with it. Unpinned (the
        ``pinning`` ablation), there are no marks to change."""
        return replace(self, varied_seed=seed) if self.pinned else self

    @property
    def run_seed(self) -> int:
        return self.seed if self.varied_seed is None else self.varied_seed

    def pytest_args(self) -> list[str]:
        """The arguments every test process of the climb gets. ``-n 0`` where pytest-xdist loads:
        a repository's ``addopts = -n auto`` would distribute the runner's sessions, whose groups
        run in order in one process (and whose plugin refuses xdist): every candidate's test
        files failed to collect, REJECTED. B's suite run, parallel where it pays, asks for its
        workers after these (``runner.parallel``): the last ``-n`` stands."""
        serial = ["-n", "0"] if self.serial else []
        if not self.pinned:
            return serial
        args = ["--evidence-no-network", *serial]
        for guard in self.injected:
            args += ["-p", guard.module]
        for guard in self.loaded:
            args += guard.args(self)
        return args

    def environ(self, base: Mapping[str, str], scratch: pathlib.Path) -> dict[str, str]:
        """``base`` as a test process gets it: ``scratch``, the process's own directory, holds its
        ``HOME`` and, but once the marks are changed, its temporary directory -- a patch that
        leaves itself a note in a shared one (on, under a run with the marks) finds none in the
        next process, nor in a later climb. The first run of C's code keeps the temporary
        directory the runner has, as a plain ``pytest`` would: a private one is a mark too (a
        review's patch was on wherever ``gettempdir()`` was not ``/tmp``), which that run changes."""
        if not self.pinned:
            return dict(base)
        env = {k: v for k, v in base.items() if k not in SCRUBBED}
        private = [("HOME", "home"), *([("TMPDIR", "tmp")] if self.varied_seed is None else [])]
        for name, directory in private:
            (scratch / directory).mkdir(parents=True, exist_ok=True)
            env[name] = str(scratch / directory)
        env["PYTHONHASHSEED"] = str(self.run_seed % 2**32)
        if self.varied_seed is not None:
            env[HASHSEED_NOT_INHERITED] = "1"
        if self.shim:
            env["PYTHONPATH"] = os.pathsep.join([*filter(None, [env.get("PYTHONPATH")]), *self.shim])
        return env

    def injected_versions(self) -> dict[str, str]:
        """What the runner put on the target's path: the plugin's private copy, and guard plugins."""
        found = {"pytest-evidence": pytest_evidence.__version__}
        for guard in self.injected:
            found[guard.distribution] = self.plugins[guard.distribution].split()[-1]
        return found

    def identity(self) -> str:
        """What makes two runs comparable: everything pinned but the tier budget (a time limit),
        whether the store was hidden (the tests never read it: a batch's workers, each with a
        store of its own, share B's run) and whether installed code was read-only (an honest
        test does not write it; where it is, is the machine's)."""
        pinned = {k: v for k, v in self.to_dict().items() if k not in ("tier_budget", "read_only")}
        pinned["missing"] = list(self.missing)
        return json.dumps(pinned, sort_keys=True)

    @property
    def test_timeout_held(self) -> bool:
        """A per-test timeout is in force: pytest-timeout is loaded and a limit is set."""
        return bool(self.test_timeout) and any(g.distribution == "pytest-timeout" for g in self.loaded)

    @property
    def session_leader(self) -> bool:
        """Whether a test process starts a session of its own (``start_new_session``): no
        terminal to read, and a kill of its process group takes its children. Not once
        ``vary``-ed: ``os.getsid(0) == os.getpid()`` is a mark (a review's patch was on wherever
        it held), and a shell's job is a process group of its own in the shell's session, which
        ``preexec`` makes that process."""
        return self.varied_seed is None

    @property
    def preexec(self) -> Callable[[], None]:
        """Run in the child between fork and exec: die with the runner (``kill -9`` of the runner
        leaves no pytest running; not once ``vary``-ed: a mark, and that process ends by its budget
        or its output pipe closing), lead a process group (``session_leader``), enter the
        namespace, and (``memory``) cap the address space. Asked for in the runner, for each
        process it starts."""
        dies = None if self.varied_seed is not None else dies_with_parent(signal.SIGKILL)
        group = not self.session_leader
        namespace, limit = self.network == "netns", self.memory
        hidden = [os.fsencode(path) for path in self.hidden]
        read_only = [netns.protected(path) for path in self.read_only] if namespace else []

        def enter() -> None:
            if dies is not None:
                dies()
            if group:
                os.setpgid(0, 0)
            if namespace:
                netns.enter(hidden, read_only)
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        return enter

    def to_dict(self) -> dict[str, object]:
        return {
            "network": self.network,
            "seed": self.seed,
            "hashseed": self.seed % 2**32,
            "test_timeout": self.test_timeout,
            "tier_budget": self.tier_budget,
            "home": "temporary",
            "tmpdir": "temporary",
            "scrubbed": sorted(SCRUBBED),
            "plugins": dict(self.plugins),
            "missing": list(self.unmet),
            "read_only": list(self.read_only),
            # Python subprocesses load the socket guard (pytest_evidence/carrier.py); any other
            # subprocess, and C code, is held by the namespace alone.
            "subprocess_guard": "python",
        }


PR_SET_PDEATHSIG = 1


def dies_with_parent(signum: int) -> Callable[[], None]:
    """What a child runs between fork and exec to get ``signum`` when this process, which starts
    it, dies (Linux; elsewhere nothing). Made in this process, before the fork: the kernel only
    signals a parent's death after the child asked, so a child whose parent died in between (a
    runner killed as it started a process) finds another parent and ends itself at once."""
    parent = os.getpid()
    # Looked up here: loading a library between fork and exec can deadlock a threaded parent.
    prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None

    def asked() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signum)
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)

    return asked


#: The ``network`` of a sandbox that pins nothing (the A/B harness's ``pinning`` ablation).
OPEN = "none"


def unpinned(seed: int, tier_budget: float | None) -> Sandbox:
    """The A/B harness's ``pinning`` ablation: the tests run as a plain ``pytest`` would -- no
    seed, the network open, no per-test timeout, the environment as it is."""
    why = "pinning ablated: no seed, no network guard, no per-test timeout, the environment not scrubbed"
    return Sandbox(seed, None, tier_budget, OPEN, missing=(why,))


def pin_environment(
    target: Target,
    seed: int = DEFAULT_SEED,
    test_timeout: float | None = DEFAULT_TEST_TIMEOUT,
    tier_budget: float | None = None,
    disabled: Collection[str] = (),
    store: str | None = None,
    bytecode: str | None = None,
    repository: Sequence[str] = (),
) -> Sandbox:
    """Decide, once per climb, how every test process runs.

    ``disabled``: plugin names the repository's configuration (or ``--pytest-arg``) switches off
    with ``-p no:NAME``; a guard it names is not loaded (its options would be a usage error) and
    its guarantee is listed as missing. ``store``: the directory of the evidence store, to hide
    from the test processes (None: none to hide, or one that cannot be, listed as missing by the
    caller). ``bytecode``: the directory of the bytecode kept between certifies, kept only where
    it can be covered too (a test that wrote an entry would choose the code of later certifies).
    ``repository``: the user's work tree and git directory, read-only with installed code
    (``read_only_view``).
    """
    network = "netns" if netns.available() else "socket_guard"
    missing = [] if network == "netns" else ["network namespace: not permitted here; the socket guard alone blocks"]
    hidden: tuple[str, ...] = ()
    in_reach = None
    if store is not None and netns.can_hide():
        hidden = (store,)
    elif store is not None:
        in_reach = "the evidence store's directory %s: test processes can reach it (no mount namespace)" % store
    if bytecode is not None and netns.can_hide():
        hidden += tuple(d for d in [bytecode] if not any(_within(d, h) for h in hidden))
    else:
        bytecode = None
    read_only = read_only_view(target, repository) if network == "netns" else ()
    writable = None
    if network != "netns":
        writable = "%s (no mount namespace)" % WRITABLE
    elif not netns.can_protect(read_only):
        read_only, writable = (), "%s (the kernel refused to bind them read-only)" % WRITABLE
    plugins: dict[str, str] = {}
    problems: dict[str, str | None] = {}
    injected: list[Guard] = []
    installed = target.guard_versions()
    for guard in GUARDS:
        version = installed.get(guard.distribution, "absent")
        if guard.name in disabled or guard.module in disabled:
            problems[guard.name] = "the repository's pytest configuration has -p no:%s" % guard.name
        elif version != "absent":
            problems[guard.name] = None
            plugins[guard.distribution] = "installed %s" % version
        else:
            problems[guard.name] = _inject(guard, target)
            if problems[guard.name] is None:
                injected.append(guard)
                plugins[guard.distribution] = "injected %s" % importlib.metadata.version(guard.distribution)
    loaded = [g for g in GUARDS if problems[g.name] is None]
    for guard in SEEDED:  # the repository's -p no:NAME is its choice on both sides
        version = installed.get(guard.distribution, "absent")
        if version != "absent" and guard.name not in disabled and guard.module not in disabled:
            loaded.append(guard)
            plugins[guard.distribution] = "installed %s" % version
    missing += ["%s: %s" % (g.guarantee, problems[g.name]) for g in GUARDS if problems[g.name] is not None]
    copies = guard_copies()
    return Sandbox(
        seed,
        test_timeout or None,
        tier_budget,
        network,
        tuple(loaded),
        tuple(injected),
        tuple(copies[g.distribution] for g in injected),
        plugins,
        tuple(missing),
        hidden=hidden,
        in_reach=in_reach,
        bytecode=bytecode,
        serial=target.has_xdist and not {"xdist", "xdist.plugin"} & set(disabled),
        read_only=read_only,
        writable=writable,
    )


def read_only_view(target: Target, repository: Sequence[str] = ()) -> tuple[str, ...]:
    """The directories every test process sees read-only: ``read_only_places`` (the code it
    runs, and what chooses the code the runner's own processes run) and ``repository``, the
    user's work tree and git directory -- where a test wrote the user's files, or a hook or
    configuration the runner's git would have run (an independent check's ``post-checkout``
    made a later no-fix candidate CERTIFIED). Left out: what is already read-only, and any
    directory that holds where test processes write (the temporary directory, which holds
    their checkouts); of nested directories, the outermost."""
    written = os.path.realpath(tempfile.gettempdir())
    found: list[str] = []
    for real in sorted({os.path.realpath(place) for place in [*read_only_places(target), *repository]}):
        if any(_within(real, outer) for outer in found):  # sorted: what holds it came first
            continue
        if os.path.isdir(real) and netns.writable_here(real) and not _within(written, real):
            found.append(real)
    return tuple(found)


def read_only_places(target: Target) -> list[str]:
    """What a test process must not write. The code every test process runs: the plugin's
    private copy, the target's import path
    (and where a missing entry of it would be made) and the runner's own packages, with each
    interpreter's directory (a virtual environment's root where it is one); and what chooses
    the code the runner's own processes run: the directories of ``PATH`` (a ``git`` put first
    there), the user's home (``~/.gitconfig``: a filter the runner's git ran; a user site
    directory) and ``/etc`` (``gitconfig``, ``ld.so.preload``). A ``.pth`` file or a module a
    test planted or rewrote there would run in every later process of that interpreter -- the
    next certify's tests, its probes, the runner itself -- with no check of this certify
    looking (reviews' probes, each a false CERTIFIED of a later candidate)."""
    here = os.path.realpath(os.getcwd())  # on the path of a runner run as ``python -m``: the user's, not installed
    path = [p for p in target.search_path() if os.path.realpath(p) != here]
    return [
        plugin_root(),
        *path,
        *(_existing_parent(p) for p in path if not os.path.exists(p)),
        *_interpreter(target.executable),
        os.path.dirname(os.path.dirname(os.path.abspath(pytest_evidence.__file__))),
        *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
        *_interpreter(sys.executable),
        *os.environ.get("PATH", "").split(os.pathsep),
        os.path.expanduser("~"),
        "/etc",
    ]


def _existing_parent(path: str) -> str:
    """The nearest directory above ``path`` that is there: a ``python311.zip`` on the path, not
    there yet, is imported from once a test makes it (a review's, holding a ``sitecustomize``)."""
    while path and not os.path.isdir(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def _interpreter(executable: str) -> list[str]:
    """An interpreter's directory, and its virtual environment's root (``pyvenv.cfg``)."""
    where = os.path.dirname(os.path.abspath(executable))
    root = os.path.dirname(where)
    return [where, *([root] if os.path.isfile(os.path.join(root, "pyvenv.cfg")) else [])]


def _within(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or under it (a cover there covers it already; a second
    could not be mounted on a path the first took away)."""
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(directory)]) == os.path.realpath(directory)


def _inject(guard: Guard, target: Target) -> str | None:
    """Whether the runner's own copy of ``guard`` goes into the target: the reason it cannot, or
    None. The copy was tried there by the target's probe (``Target.guard_refusal``)."""
    try:
        meta = importlib.metadata.metadata(guard.distribution)
    except importlib.metadata.PackageNotFoundError:
        return "%s is installed neither in the target nor with the runner" % guard.distribution
    requires, python = meta["Requires-Python"] or "", target.environment().python
    if requires and python not in SpecifierSet(requires):
        return "%s %s needs Python %s; the target has %s" % (guard.distribution, meta["Version"], requires, python)
    if guard.distribution not in guard_copies():
        return "the runner's %s cannot be located" % guard.distribution
    refused = target.guard_refusal(guard.module)
    return None if refused is None else "the runner's copy does not import in the target: %s" % refused
