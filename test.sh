#!/usr/bin/env bash
# test.sh — install dependencies, then two passes; this is the command CI runs.
#  1. _build/: build with -Werror and run every test (`make check`: cmocka units,
#     integration tests with real mpirun and a real local Slurm, fuzzing).
#  2. _build-asan/: build again with ASan + UBSan (--enable-sanitizers --enable-werror)
#     and run the cmocka units only (`make check-unit`, tests/Makefile.inc); a UBSan
#     report fails the test (halt_on_error), as does any ASan or leak report.
# Both passes always run. Ends with one line "N passed, N failed, N skipped" over both
# (from automake's .trs files) and exits non-zero if either pass failed.
set -euo pipefail
cd "$(dirname "$0")"
./scripts/install-deps.sh
mkdir -p m4
autoreconf -fi >/dev/null

# count DIR RE: test results in DIR's automake logs whose result matches RE.
count() {
    find "$1" -name '*.trs' -exec cat {} + |
        awk -v re="$2" '$0 ~ "^:test-result: (" re ")" {n++} END {print n+0}'
}
# show_failures DIR: the end of each failed test's log.
show_failures() {
    local re='^:test-result: (FAIL|ERROR|XPASS)'
    for f in $(find "$1" -name '*.trs' -exec grep -l -E "$re" {} +); do
        echo "===== ${f%.trs}.log"
        tail -n 60 "${f%.trs}.log"
    done
}
# pass DIR CONFIGURE-ARGS... -- MAKE-TARGET: configure (once) and build in DIR, then run
# the target; results of an earlier run (of a test since removed) are cleared first.
pass() {
    local dir=$1 conf=()
    shift
    while [ "$1" != -- ]; do conf+=("$1"); shift; done
    local target=$2
    mkdir -p "$dir" &&
    (cd "$dir" &&
     { [ -f Makefile ] || ../configure -q "${conf[@]}"; } &&
     make -j2 >/dev/null &&
     find . -name '*.trs' -delete &&
     make -j2 "$target")
}
# report NAME DIR RC SECONDS: one line for the pass, its counts added to the totals. A pass
# that failed without a failed test (configure or the build broke) counts one failure.
npass=0 nfail=0 nskip=0
report() {
    local p f k
    p=$(count "$2" PASS) f=$(count "$2" 'FAIL|ERROR|XPASS') k=$(count "$2" SKIP)
    if [ "$3" != 0 ] && [ "$f" = 0 ]; then
        echo "test.sh: $1: failed before its tests ran (exit $3; see the output above)"
        f=1
    fi
    echo "test.sh: $1: $p passed, $f failed, $k skipped ($4 s)"
    npass=$((npass + p)) nfail=$((nfail + f)) nskip=$((nskip + k))
}

rc=0
start=$SECONDS
pass _build --enable-werror -- check || rc=$?
t1=$((SECONDS - start))

arc=0
start=$SECONDS
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
    pass _build-asan --enable-sanitizers --enable-werror -- check-unit || arc=$?
t2=$((SECONDS - start))

[ "$rc" = 0 ] || show_failures _build
[ "$arc" = 0 ] || show_failures _build-asan
report "-Werror build, make check" _build "$rc" "$t1"
report "ASan+UBSan build, make check-unit" _build-asan "$arc" "$t2"
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$rc" = 0 ] && [ "$arc" = 0 ]
