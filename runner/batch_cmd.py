"""``evidence-runner certify-batch``: every candidate of a list judged against one B.

Exit codes: 0 at least one candidate is CERTIFIED; 1 none is, and every candidate has a verdict;
3 none is, and some candidate has no verdict (its certify crashed or ran out of time); 2 bad
input, found before anything runs; 4 an internal error or an interrupt (a second run resumes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import pathlib
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pytest_evidence.errors import EXIT_CERTIFIED, EXIT_INCONCLUSIVE, EXIT_REJECTED, BadInput, Usage
from pytest_evidence.output import check_writable, write_json, write_text
from runner.batch import baseline, candidates, local, rank, ray_exec
from runner.batch.candidates import Candidate
from runner.batch.command import Certify
from runner.report_cmd import EXPORTS as _EXPORTED

#: certify's options a batch sets per candidate itself.
OWN = ("--candidate", "--patch", "--out")
#: certify's exports: every candidate would write the same file, so a batch takes none.
EXPORTS = tuple("--" + name for name in _EXPORTED)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", required=True, type=pathlib.Path, help="the git repository")
    parser.add_argument(
        "--baseline", required=True, metavar="REV", help="the buggy baseline B, shared by every candidate"
    )
    parser.add_argument(
        "--candidates",
        required=True,
        type=pathlib.Path,
        metavar="FILE|DIR",
        help="a file with one candidate per line (a revision, or a patch path relative to the file), "
        "or a directory of *.patch files",
    )
    parser.add_argument(
        "--out", required=True, type=pathlib.Path, metavar="DIR", help="where the records, logs and summary go"
    )
    parser.add_argument(
        "--jobs",
        type=_natural,
        default=None,
        metavar="N",
        help="candidates certified at once (default: one per core, as memory allows at %d MiB each)"
        % (local.MEMORY_PER_JOB // 2**20),
    )
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local: one process per candidate on this machine (default); ray: one Ray task per candidate "
        "(the ray extra)",
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="with --executor ray: the Ray cluster to join (default: a local Ray of --jobs CPUs)",
    )
    parser.add_argument(
        "--candidate-timeout",
        type=float,
        default=None,
        metavar="S",
        help="kill a candidate's certify after S seconds: it ranks last, without a verdict (default: none)",
    )
    parser.add_argument("--store", type=pathlib.Path, default=None, help="the evidence store (default: certify's)")
    parser.epilog = (
        "Every other option is certify's and applies to every candidate (evidence-runner certify --help); "
        "arguments after -- are pytest's."
    )


def _natural(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError("%r is not a whole number >= 1" % value)
    return int(value)


def run(args: argparse.Namespace, certify_words: Sequence[str], progress: Callable[[str], None]) -> tuple[int, str]:
    repo = args.repo.resolve()
    words = ["--repo", str(repo), "--baseline", args.baseline, *certify_words]
    if args.store is not None:
        words += ["--store", str(args.store.resolve())]
    owned = [w for w in certify_words if w.split("=", 1)[0] in OWN + EXPORTS]
    if owned:
        raise Usage(
            "certify-batch sets %s per candidate and writes one record each: drop %s" % ("/".join(OWN), " ".join(owned))
        )
    if args.address is not None and args.executor != "ray":
        raise Usage("--address needs --executor ray")
    if args.address is not None and args.jobs is not None:
        raise Usage("--jobs with --address: the cluster's CPUs bound a Ray batch there; drop --jobs")
    if args.executor == "ray":
        ray_exec.require()  # a missing extra is bad input before anything runs
    ns = baseline.certify_args(words, args.passthrough, ["--candidate", args.baseline])
    found = candidates.read(args.candidates.resolve(), repo)
    out = args.out.resolve()
    for sub in ("records", "logs", "outcomes"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    check_writable(str(out / "batch.json"), "--out", create_parents=False)
    _manifest(out, args.baseline, found, words, args.passthrough)
    started = time.perf_counter()
    progress("B: building (or finding) the baseline suite run, once for %d candidate(s)" % len(found))
    built = baseline.build(ns, progress)
    todo = [c for c in found if _finished(out, c) is None]
    with _workers(args) as jobs:
        progress(
            "%d candidate(s) to certify, %d on %d %s%s"
            % (
                len(found),
                len(todo),
                jobs,
                "Ray CPU(s)" if args.executor == "ray" else "job(s)",
                "" if len(todo) == len(found) else "; the rest were finished before",
            )
        )
        spec = Certify(args.baseline, tuple(certify_words), tuple(args.passthrough))
        count = [len(found) - len(todo)]

        def done(cand: Candidate, finished: local.Finished) -> None:
            said: dict[str, Any] = {"exit_code": finished.exit_code, "seconds": round(finished.seconds, 3)}
            if finished.error is not None:
                said["error"] = finished.error
            write_json(str(out / "outcomes" / (cand.name + ".json")), said)
            count[0] += 1
            row = _outcome(out, cand).row()
            at = " at %s" % row["halted_at"] if row["halted_at"] else ""
            progress(
                "[%d/%d] %s: %s%s (%.1f s)"
                % (count[0], len(found), cand.name, row["verdict"] or "no verdict", at, finished.seconds)
            )

        if args.executor == "ray":
            listed = [(c, _record(out, c), _log(out, c)) for c in todo]
            ray_exec.run(listed, spec, built, repo, args.candidate_timeout, done)
        else:
            commands = [
                (c, spec.command(str(repo), str(built.store), c.certify_args(), str(_record(out, c))), _log(out, c))
                for c in todo
            ]
            local.run(commands, jobs, args.candidate_timeout, done)
        wall = time.perf_counter() - started
    doc = rank.summary(built.commit, [_outcome(out, c) for c in found], wall, jobs, args.executor)
    write_json(str(out / "batch.json"), doc)
    write_text(str(out / "batch.md"), rank.markdown(doc))
    verdicts = doc["verdicts"]
    if verdicts["CERTIFIED"]:
        code = EXIT_CERTIFIED
    else:
        code = EXIT_INCONCLUSIVE if verdicts["no verdict"] else EXIT_REJECTED
    best = doc["ranking"][0]
    return code, "%d candidate(s): %s; best %s (%s); summary %s" % (
        len(found),
        ", ".join("%s %d" % (k, v) for k, v in verdicts.items() if v),
        best["name"],
        best["verdict"] or "no verdict",
        out / "batch.md",
    )


@contextlib.contextmanager
def _workers(args: argparse.Namespace) -> Iterator[int]:
    """The candidates judged at once: ``--jobs`` local processes, or the CPUs of the Ray joined."""
    jobs = args.jobs or local.default_jobs()
    if args.executor == "ray":
        with ray_exec.connected(args.address, jobs) as cpus:
            yield cpus
    else:
        yield jobs


def _record(out: pathlib.Path, cand: Candidate) -> pathlib.Path:
    return out / "records" / (cand.name + ".json")


def _log(out: pathlib.Path, cand: Candidate) -> pathlib.Path:
    return out / "logs" / (cand.name + ".log")


def _finished(out: pathlib.Path, cand: Candidate) -> dict[str, Any] | None:
    """The candidate's record when it holds a verdict: a finished candidate is never run again."""
    try:
        doc = json.loads(_record(out, cand).read_text(encoding="utf-8"))
        json.loads((out / "outcomes" / (cand.name + ".json")).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("verdict") is not None else None


def _outcome(out: pathlib.Path, cand: Candidate) -> rank.Outcome:
    try:
        said = json.loads((out / "outcomes" / (cand.name + ".json")).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        said = {"exit_code": None, "seconds": 0.0}
    return rank.Outcome(
        cand,
        _finished(out, cand),
        said["exit_code"],
        said["seconds"],
        str(_log(out, cand)),
        str(_record(out, cand)),
        said.get("error"),
    )


def _manifest(
    out: pathlib.Path, base: str, found: Sequence[Candidate], words: Sequence[str], tail: Sequence[str]
) -> None:
    """What the batch is; a second run into the same ``--out`` resumes it only if it is the same batch."""
    doc = {"baseline": base, "candidates": [c.to_dict() for c in found], "certify": list(words), "pytest": list(tail)}
    path = out / "manifest.json"
    if path.exists():
        try:
            before = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            before = None
        if before != doc:
            raise BadInput("--out %s holds another batch (its manifest.json differs): use a new directory" % out)
        return
    write_json(str(path), doc)
