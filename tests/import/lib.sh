# lib.sh — helpers for the import shell tests (sourced): the real-trace folder, a scratch
# directory removed on success, argus-analyze from the build tree.
set -eu
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
ANALYZE="$top_builddir/argus-analyze"
DATA="$top_srcdir/../shared/data/traces"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/argus-imp.XXXXXX")
cleanup() { rc=$?; if [ $rc = 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
need_data() { [ -d "$DATA" ] || { echo "SKIP: no $DATA"; exit 77; }; }
