"""Screenshot of the HTML report (``evidence-runner report RECORD --html``) on the built-in example.

    python docs/screenshot.py report.png [--candidate regression] [--window-size 1280,3000]

Certifies one candidate of the example repository (a real climb: a minute at most, no network),
renders its record with ``runner.exports.html`` and has headless Chromium photograph the page, so
the picture in a review or the docs is what the code of this checkout draws today, not a mock-up.
Chromium runs with a throwaway profile and no sandbox (it refuses to start as root otherwise).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

#: This checkout, first on the path: the page photographed is the one its code renders.
ROOT = pathlib.Path(__file__).resolve().parent.parent

#: Headless, offline, no profile state: what a CI machine can run, and nothing phones home.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=pathlib.Path, help="the PNG to write")
    parser.add_argument("--candidate", default="regression", help="the example's candidate (default: regression)")
    parser.add_argument("--window-size", default="1280,3000", help="WIDTH,HEIGHT in pixels (default: 1280,3000)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--keep-html", type=pathlib.Path, help="also keep the rendered page here")
    args = parser.parse_args(argv)
    if not os.access(args.chromium, os.X_OK):
        print("screenshot: no chromium at %s (apt-get install chromium)" % args.chromium, file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    from pytest_evidence.model import EvidenceRecord
    from runner import demo, example_repo
    from runner.exports import html

    with tempfile.TemporaryDirectory(prefix="evidence-screenshot-") as tmp:
        work = pathlib.Path(tmp)
        repo = example_repo.build(work / "shop")
        if args.candidate not in repo.candidates:
            print("screenshot: no candidate %r; the example has %s" % (args.candidate, ", ".join(repo.candidates)))
            return 2
        _code, doc = demo.certify_candidate(repo, args.candidate, work / "record.json", work / "store.sqlite3")
        page = args.keep_html or work / "report.html"
        page.write_text(html.render(EvidenceRecord.from_dict(doc)), encoding="utf-8")
        command = [
            args.chromium,
            *CHROMIUM_FLAGS,
            "--user-data-dir=%s" % (work / "profile"),
            "--window-size=%s" % args.window_size,
            "--screenshot=%s" % args.out.resolve(),
            page.resolve().as_uri(),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0 or not args.out.is_file():
        print("screenshot: chromium failed (exit %d): %s" % (done.returncode, done.stderr.strip()), file=sys.stderr)
        return 1
    print("wrote %s (%s, candidate %s)" % (args.out, args.window_size, args.candidate))
    return 0


if __name__ == "__main__":
    sys.exit(main())
