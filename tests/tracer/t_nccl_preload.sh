#!/bin/sh
# libargus.so in LD_PRELOAD takes NCCL's communicator calls (tracer/ncclhook.c) of a
# program linked against libnccl (here the fake one, fake_nccl.c) and passes them on:
# the program's ncclCommInitRank resolves to libargus.so, and every call still reaches
# the library with its results unchanged (nccl_app checks them).
set -eu
: "${top_builddir:?run through make check}"
lib="$top_builddir/.libs/libargus.so"
[ -f "$lib" ] || { echo "SKIP: no $lib"; exit 77; }
unset ARGUS_MODE || true
out=$(LD_PRELOAD="$lib" "$top_builddir/tests/tracer/nccl_app") || {
    echo "FAIL: nccl_app under LD_PRELOAD: $out" >&2; exit 1; }
echo "$out"
echo "$out" | grep -q "ncclCommInitRank from .*libargus" || {
    echo "FAIL: ncclCommInitRank not interposed" >&2; exit 1; }
# the same through the preload shim (argus-run's way): libargus.so is loaded after the
# program's libnccl and must still find it (argus_preload_next)
shim="$top_builddir/.libs/libargus_preload.so"
if [ -f "$shim" ]; then
    out=$(ARGUS_MODE=on ARGUS_LOG=error LD_PRELOAD="$shim" \
          "$top_builddir/tests/tracer/nccl_app") || {
        echo "FAIL: nccl_app under the preload shim: $out" >&2; exit 1; }
    echo "$out" | grep -q "ncclCommInitRank from .*libargus_preload" || {
        echo "FAIL: ncclCommInitRank not interposed by the shim: $out" >&2; exit 1; }
fi
# and without the preload the program runs on the fake alone
out=$("$top_builddir/tests/tracer/nccl_app") || { echo "FAIL: nccl_app alone" >&2; exit 1; }
echo "$out" | grep -q "ncclCommInitRank from .*fakenccl" || {
    echo "FAIL: expected the fake library without the preload: $out" >&2; exit 1; }
