#!/bin/sh
# t_fuzz.sh — fuzzing in `make check`: fuzz/run.sh builds the libFuzzer harnesses (ASan +
# UBSan) of the Kineto importer and the summary decoder, replays every kept regression
# input (tests/import/fuzz/*/), then fuzzes each for ARGUS_FUZZ_SECONDS (default 45) in a
# scratch directory. Fails on any crash, leak, sanitizer report or timeout and prints the
# reproducer's path (the scratch directory is kept); skips (77) only when clang or its
# libFuzzer runtime is missing (scripts/install-deps.sh installs clang, libclang-rt-14-dev).
. "$(dirname "$0")/lib.sh"
top_builddir=$(cd "$top_builddir" && pwd)
export top_builddir
rc=0
S=${ARGUS_FUZZ_SECONDS:-45}
TMPDIR="$WORK" FUZZ_OUT="$WORK/fuzz" sh "$top_srcdir/fuzz/run.sh" "$S" || rc=$?
[ $rc = 77 ] && { echo "SKIP: clang/libFuzzer unavailable"; exit 77; }
[ $rc = 0 ] || fail "fuzzing found a problem (reproducers above, in $WORK/fuzz)"
