# lib.sh — helpers for the argus-flows shell tests (sourced): a scratch directory removed
# on success, argus-flows from the build tree, the emitter and the scorer beside this file.
set -eu
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
FLOWS="$top_builddir/argus-flows"
HERE="$top_srcdir/tests/flows"
PY=${PYTHON:-python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/argus-flows.XXXXXX")
cleanup() { rc=$?; if [ $rc = 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# jq-free look into flows.json: jget OUTDIR PYTHON-EXPRESSION-ON-d
jget() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1]+'/flows.json')); print($2)" "$1"; }
