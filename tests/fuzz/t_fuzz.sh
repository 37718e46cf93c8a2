#!/bin/sh
# t_fuzz.sh — fuzzing in `make check`: tests/fuzz/run.sh builds the libFuzzer harnesses
# (ASan + UBSan) of the Kineto importer and the summary decoder, replays every kept
# regression input (tests/fuzz/corpus/*/), then fuzzes each for ARGUS_FUZZ_SECONDS
# (default 45) in a scratch directory. Fails on any crash, leak, sanitizer report or timeout
# and prints the reproducer's path (the scratch directory is kept); skips (77) only when
# clang or its libFuzzer runtime is missing (scripts/install-deps.sh installs clang,
# libclang-rt-14-dev).
set -eu
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
top_builddir=$(cd "$top_builddir" && pwd)
export top_builddir
WORK=$(mktemp -d "${TMPDIR:-/tmp}/argus-fuzz.XXXXXX")
cleanup() { rc=$?; if [ $rc = 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi; }
trap cleanup EXIT
rc=0
S=${ARGUS_FUZZ_SECONDS:-45}
TMPDIR="$WORK" FUZZ_OUT="$WORK/fuzz" sh "$top_srcdir/tests/fuzz/run.sh" "$S" || rc=$?
[ $rc = 77 ] && { echo "SKIP: clang/libFuzzer unavailable"; exit 77; }
[ $rc = 0 ] || { echo "FAIL: fuzzing found a problem (reproducers above, in $WORK/fuzz)" >&2;
                 exit 1; }
