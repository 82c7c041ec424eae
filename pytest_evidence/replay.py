"""``replay_baseline``: run the candidate's tests on B, once per (B tree, overlay, environment).

B is materialised as a temporary git worktree, the candidate's test files are laid over it (see
``overlay``), and pytest runs there in a subprocess with this plugin in record mode. The parent
reads the observations back from the stream -- a private channel (``pytest_evidence.channel``: an
unnamed file and a key, passed as inherited descriptors), so a line the plugin did not write is
a forgery (``BaselineRun.forgery``), never a result; it never parses pytest's text. Results are cached
in the store under a key of B's tree, the overlay digest, the environment fingerprint and the
rerun policy, so a second run against the same B runs nothing on B.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence

from pytest_evidence import gitops, locate, overlay, stream
from pytest_evidence.channel import PrivateChannel
from pytest_evidence.inject import INJECT_PLUGIN, RECORD_LAUNCH, private_copy
from pytest_evidence.model import Failure, FailureKind, Observation, Outcome, bounded

#: Bumped when the meaning of a cached B observation changes, or how its failure is written
#: (2: B runs in record mode, where every failure is formatted natively, record format 1.19; 3:
#: items that share a node id get ids of their own, record format 1.20).
POLICY_VERSION = "3"


@dataclass(frozen=True)
class BaselineRequest:
    """Everything that determines what B says about a set of tests."""

    git_root: str
    rootdir_prefix: str  # pytest's rootdir relative to the git root ("" when they coincide)
    plan: overlay.OverlayPlan
    env_fingerprint: str
    reruns: int

    def cache_key(self) -> str:
        parts = [self.plan.baseline_tree, self.plan.digest(), self.env_fingerprint, str(self.reruns), POLICY_VERSION]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class BaselineRun:
    """What one B subprocess produced."""

    observed: Dict[str, Optional[Observation]]
    exit_code: int
    stderr_tail: str
    #: The first line of B's stream the plugin did not write (``line N: what``), or None. What
    #: followed it is not in ``observed``; a forged run is a ``tamper`` detection
    #: (``stream_forged``) and is never cached.
    forgery: Optional[str] = None


def run_on_baseline(request: BaselineRequest, test_ids: Sequence[str]) -> BaselineRun:
    """Run ``test_ids`` on B with the overlay and return one observation (or None) per id."""
    scratch = tempfile.mkdtemp(prefix="evidence-baseline-")
    tree = os.path.join(scratch, "tree")
    try:
        gitops.add_worktree(request.git_root, request.plan.baseline_commit, tree)
        overlay.apply(request.plan, request.git_root, tree)
        cwd = os.path.join(tree, request.rootdir_prefix) if request.rootdir_prefix else tree
        select = os.path.join(scratch, "select.txt")
        with open(select, "w", encoding="utf-8") as fh:
            fh.write("\n".join(test_ids) + "\n")
        files = sorted({tid.split("::", 1)[0] for tid in test_ids})
        present = [f for f in files if os.path.exists(os.path.join(cwd, f))]
        plugin = private_copy(os.path.join(scratch, "plugin"))
        with PrivateChannel() as channel:
            proc = _run_pytest(request, cwd, tree, plugin, select, channel, present)
            content = locate.content(channel.read(), cwd)  # node ids are relative to cwd too
        observed = {tid: observation_for(tid, content) for tid in test_ids}
        stderr = bounded(proc.stderr.decode("utf-8", "replace"), 2000)
        return BaselineRun(observed, proc.returncode, stderr, content.forgery)
    finally:
        gitops.remove_worktree(request.git_root, tree)
        shutil.rmtree(scratch, ignore_errors=True)


def _run_pytest(
    request: BaselineRequest,
    cwd: str,
    tree: str,
    plugin: str,
    select: str,
    channel: PrivateChannel,
    files: Sequence[str],
) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ)
    # The plugin's private copy (never a whole site-packages) first: nothing in the checkout
    # replaces it. Then the checkout's own source.
    paths = [plugin, tree] + ([os.path.join(tree, "src")] if os.path.isdir(os.path.join(tree, "src")) else [])
    paths += [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.pop("PYTEST_XDIST_WORKER", None)
    cmd = [
        sys.executable,
        *RECORD_LAUNCH,
        *INJECT_PLUGIN,
        "--evidence-record-mode",
        *channel.args(),
        "--evidence-select=" + select,
        "--evidence-reruns=%d" % request.reruns,
        "-p",
        "no:cacheprovider",
        "--continue-on-collection-errors",
        "-q",
        *files,
    ]
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, pass_fds=channel.pass_fds
    )
    try:
        channel.started()
        _, stderr = proc.communicate()
    except BaseException:  # as subprocess.run does: Ctrl-C leaves no B process behind
        proc.kill()
        proc.wait()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, None, stderr)


def holds(nodeid: str, test_id: str) -> bool:
    """Whether the collector ``nodeid`` is or holds ``test_id``: the session, a directory or
    package, a module -- or a class of one, which holds its own tests only (a ``TestSuite``
    imported from unittest that errors at collection takes none of its module's tests along)."""
    if "::" in nodeid:
        return test_id == nodeid or test_id.startswith(nodeid + "::")
    path = test_id.split("::", 1)[0]
    return nodeid in ("", ".") or path == nodeid or path.startswith(nodeid.rstrip("/") + "/")


def observation_for(test_id: str, content: stream.StreamContent) -> Optional[Observation]:
    """B's observation of ``test_id``; a collection error of a collector holding it counts as ``error``."""
    if test_id in content.results:
        return content.results[test_id]
    for nodeid, failure in content.collect_errors.items():
        if holds(nodeid, test_id):
            return Observation(
                test_id=test_id,
                outcome=Outcome.ERROR,
                duration=0.0,
                failure=Failure(
                    FailureKind.COLLECTION_ERROR, failure.message, failure.path, failure.line, failure.excerpt
                ),
                stdout_summary="",
                attempts=(Outcome.ERROR,),
            )
    return None


def rootdir_prefix(git_root: str, rootdir: str) -> str:
    """pytest's rootdir relative to the git root, in posix form ("" when they coincide)."""
    rel = os.path.relpath(os.path.realpath(rootdir), os.path.realpath(git_root))
    return "" if rel == "." else posixpath.join(*rel.split(os.sep))


def merge_runs(
    cached: Mapping[str, Optional[Observation]], fresh: Optional[BaselineRun]
) -> Dict[str, Optional[Observation]]:
    merged: Dict[str, Optional[Observation]] = dict(cached)
    if fresh is not None:
        merged.update(fresh.observed)
    return merged


def missing(test_ids: Sequence[str], cached: Mapping[str, Optional[Observation]]) -> List[str]:
    return [t for t in test_ids if t not in cached]
