#!/bin/sh
# argus-run puts Argus's NCCL profiler plugin in NCCL's slot (NCCL_PROFILER_PLUGIN) and a
# user's own plugin into ARGUS_NCCL_PROFILER_CHAIN (which Argus's plugin calls through),
# never chaining Argus to itself, and hands both to Open MPI ranks with -x.
set -eu
: "${top_builddir:?run through make check}"
run="$top_builddir/tests/argus-run-build"
plugin="$top_builddir/.libs/libargus_nccl.so"
for f in "$run" "$plugin" "$top_builddir/.libs/libargus.so"; do
    [ -e "$f" ] || { echo "FAIL: missing $f" >&2; exit 1; }
done
show='printf "%s|%s\n" "${NCCL_PROFILER_PLUGIN-unset}" "${ARGUS_NCCL_PROFILER_CHAIN-unset}"'
fail() { echo "FAIL: $*" >&2; exit 1; }

unset NCCL_PROFILER_PLUGIN ARGUS_NCCL_PROFILER_CHAIN || true
out=$("$run" -- sh -c "$show")
[ "$out" = "$plugin|unset" ] || fail "no user plugin: got '$out'"

out=$(NCCL_PROFILER_PLUGIN=inspector "$run" -- sh -c "$show")
[ "$out" = "$plugin|inspector" ] || fail "user plugin not kept as the chain: got '$out'"

# argus-run inside argus-run (or a user who names Argus's plugin): no chain to itself
out=$(NCCL_PROFILER_PLUGIN="$plugin" "$run" -- sh -c "$show")
[ "$out" = "$plugin|unset" ] || fail "Argus chained to itself: got '$out'"
out=$(NCCL_PROFILER_PLUGIN=inspector "$run" -- "$run" -- sh -c "$show")
[ "$out" = "$plugin|inspector" ] || fail "nested argus-run lost the chain: got '$out'"

# Open MPI launchers get -x for both, when set
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\necho "$@"\n' > "$tmp/mpirun"
chmod +x "$tmp/mpirun"
out=$(NCCL_PROFILER_PLUGIN=inspector "$run" -- "$tmp/mpirun" -np 2 ./train)
echo "$out" | grep -q -- "-x NCCL_PROFILER_PLUGIN" || fail "no -x NCCL_PROFILER_PLUGIN: $out"
echo "$out" | grep -q -- "-x ARGUS_NCCL_PROFILER_CHAIN" || fail "no -x for the chain: $out"
out=$("$run" -- "$tmp/mpirun" -np 2 ./train)
echo "$out" | grep -q -- "-x ARGUS_NCCL_PROFILER_CHAIN" && fail "-x for an unset chain: $out"
echo "pass: argus-run sets NCCL_PROFILER_PLUGIN and keeps the user's as the chain"
