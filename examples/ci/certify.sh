#!/bin/sh
# Certify a change request with typed evidence, on any CI system (GitLab, Jenkins, Buildkite...):
# the head is the candidate C, its merge base with the target branch the baseline B. Exits with
# evidence-runner certify's own code, so the job passes only when the patch is CERTIFIED:
#   0 CERTIFIED, 1 REJECTED, 3 INCONCLUSIVE (each with a record), 2 bad input (nothing ran, no
#   record), 4 internal error or interrupted.
#
# Environment:
#   EVIDENCE_BASE    required: the target branch as the clone knows it (origin/main) or its sha
#   EVIDENCE_HEAD    the change's head (default: HEAD)
#   EVIDENCE_PYTHON  the interpreter the project's tests run in, with their dependencies and
#                    pytest 7+ (default: python3 on PATH); nothing is installed into it
#   EVIDENCE_OUT     where evidence.json, evidence.html and evidence.md go (default: .)
#
# evidence-runner (pip install 'pytest-evidence[runner]', best in an environment of its own) must
# be on PATH, and the clone must hold both commits and their history (no shallow clone).
# See examples/ci/README.md.
set -eu

: "${EVIDENCE_BASE:?set EVIDENCE_BASE to the target branch (origin/main) or its sha}"
head_rev=${EVIDENCE_HEAD:-HEAD}
out=${EVIDENCE_OUT:-.}
python=${EVIDENCE_PYTHON:-$(command -v python3 || true)}
if [ -z "$python" ]; then
    echo "certify.sh: no python3 on PATH: set EVIDENCE_PYTHON to the interpreter of the project's tests" >&2
    exit 2
fi

mkdir -p "$out" # certify wants --out's directory to exist

BASE=$(git merge-base "$EVIDENCE_BASE" "$head_rev")
HEAD=$(git rev-parse --verify "$head_rev^{commit}")
echo "certify.sh: baseline $BASE (merge base with $EVIDENCE_BASE), candidate $HEAD"

status=0
evidence-runner certify --repo . --baseline "$BASE" --candidate "$HEAD" --python "$python" \
    --out "$out/evidence.json" --html "$out/evidence.html" --markdown "$out/evidence.md" || status=$?
case $status in
    0) echo "certify.sh: CERTIFIED" ;;
    1) echo "certify.sh: REJECTED: a tier falsified the patch, or it attacked the referee ($out/evidence.html says which)" >&2 ;;
    3) echo "certify.sh: INCONCLUSIVE: nothing proved the bug fixed ($out/evidence.html says why)" >&2 ;;
    2) echo "certify.sh: bad input: nothing ran and no record was written (the line above says what)" >&2 ;;
    *) echo "certify.sh: internal error or interrupted (exit $status): the line above says what" >&2 ;;
esac
exit "$status"
