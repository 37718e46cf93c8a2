# lib.sh — helpers for the import shell tests (sourced): the real traces in tests/data
# (tests/data/README.md), a scratch directory removed on success, argus-analyze from the
# build tree.
set -eu
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
ANALYZE="$top_builddir/argus-analyze"
DATA="$top_srcdir/tests/data"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/argus-imp.XXXXXX")
cleanup() { rc=$?; if [ $rc = 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# need_data PATH...: each PATH (relative to tests/data) is there, else the test fails; the
# data is part of the repository, so its absence is a broken checkout, not a reason to skip.
need_data() {
    for p in "$@"; do
        [ -e "$DATA/$p" ] || fail "missing test data $DATA/$p (see tests/data/README.md)"
    done
}
