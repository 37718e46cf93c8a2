#!/bin/sh
# tests/fuzz/run.sh [SECONDS] — build the libFuzzer harnesses with clang (ASan + UBSan),
# replay the kept regression inputs (tests/fuzz/corpus/{kineto,summary}/*), then fuzz each
# harness for SECONDS (default $ARGUS_FUZZ_SECONDS, else 60) on a seed corpus: the real
# traces of tests/data (decompressed) for the Kineto importer, valid wire records
# (seed_summary.c) for the decoder. The library sources come from the build tree's
# Makefile (`make fuzz-sources`, tests/fuzz/Makefile.inc), so a file added to a room is
# never missed. Output in $FUZZ_OUT (default tests/fuzz/out in the build tree).
# Exit: 0 no crash; 1 a crash, leak or timeout (the reproducer's path is printed: copy it
# into tests/fuzz/corpus/<harness>/ to keep it as a test); 77 clang or its libFuzzer
# runtime is missing (Debian: clang libclang-rt-14-dev, see scripts/install-deps.sh).
# tests/fuzz/t_fuzz.sh runs it from `make check`; needs a configured build tree
# ($top_builddir, default the source tree).
set -eu
S=${1:-${ARGUS_FUZZ_SECONDS:-60}}
src=$(cd "$(dirname "$0")/../.." && pwd)
bld=$(cd "${top_builddir:-$src}" && pwd)
out=${FUZZ_OUT:-$bld/tests/fuzz/out}
CC=${FUZZ_CC:-clang}
mkdir -p "$out/kineto" "$out/summary" "$out/flows"
out=$(cd "$out" && pwd)
command -v "$CC" >/dev/null 2>&1 || { echo "fuzz: no $CC; harnesses not built"; exit 77; }
# libFuzzer + sanitizer runtimes present? (clang without libclang-rt-*-dev cannot link)
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\n%s\n' \
    'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return d && n > 1e9; }' \
    >"$out/probe.c"
if ! "$CC" -fsanitize=fuzzer,address,undefined -o "$out/probe" "$out/probe.c" \
        >"$out/probe.log" 2>&1; then
    echo "fuzz: $CC cannot link -fsanitize=fuzzer,address,undefined" \
         "($(grep -m1 -i error "$out/probe.log" || echo unknown error)); harnesses not built"
    exit 77
fi
[ -f "$bld/config.h" ] && [ -f "$bld/Makefile" ] ||
    { echo "fuzz: no config.h or Makefile in $bld: configure first"; exit 1; }
# "kineto FILE..." and "summary FILE..." (relative to the source tree); the .c files count
srcs=$(${MAKE:-make} -s --no-print-directory -C "$bld" fuzz-sources) ||
    { echo "fuzz: make fuzz-sources failed in $bld"; exit 1; }
list() { echo "$srcs" | sed -n "s/^$1 //p" | tr ' ' '\n' | sed -n "s|^\(.*\.c\)\$|$src/\1|p"; }
KINETO=$(list kineto)
SUMMARY=$(list summary)
FLOWS=$(list flows)
[ -n "$KINETO" ] && [ -n "$SUMMARY" ] ||
    { echo "fuzz: make fuzz-sources in $bld listed no sources"; exit 1; }
CF="-g -O1 -std=gnu11 -D_GNU_SOURCE -I$src -I$src/tracer -I$bld"
CF="$CF $(pkg-config --cflags yajl zlib libzstd)"
SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
LIBS="$(pkg-config --libs yajl zlib libzstd) -lpthread -lm"
"$CC" $CF $SAN -o "$out/fuzz_kineto" "$src/tests/fuzz/fuzz_kineto.c" $KINETO $LIBS
"$CC" $CF $SAN -o "$out/fuzz_summary" "$src/tests/fuzz/fuzz_summary.c" $SUMMARY $LIBS
"$CC" $CF -o "$out/seed_summary" "$src/tests/fuzz/seed_summary.c" $SUMMARY $LIBS
"$CC" $CF $SAN -o "$out/fuzz_flows" "$src/tests/fuzz/fuzz_flows.c" $FLOWS $LIBS
# flows seeds: the emitter's IPFIX, NetFlow v9 and CSV (+ topology) of a small job, cut
if [ ! -e "$out/flows/.seeded" ] && command -v python3 >/dev/null 2>&1; then
    python3 "$src/tests/flows/emit.py" --out "$out/flows" --steps 3 --tenant 0 --storage 0 \
        --dp 2 --pp 2 --tp 2 --microbatches 2 >/dev/null
    { printf '\000'; head -c 6000 "$out/flows/flows.ipfix"; } >"$out/flows/seed-ipfix"
    { printf '\000'; head -c 6000 "$out/flows/flows.v9"; } >"$out/flows/seed-v9"
    { printf '\002'; sed 's/^/@/' "$out/flows/topology.csv"; head -c 6000 "$out/flows/flows.csv"; } \
        >"$out/flows/seed-csv"
    rm -f "$out/flows"/flows.* "$out/flows"/topology.csv "$out/flows"/truth.json
    touch "$out/flows/.seeded"
fi
"$out/seed_summary" "$out/summary"
data="$src/tests/data"
[ -d "$data/dlrm-8rank-v100" ] && [ -d "$data/hta-edge-cases" ] ||
    { echo "fuzz: missing test data in $data (see tests/data/README.md)"; exit 1; }
if [ ! -e "$out/kineto/.seeded" ]; then
    for f in "$data"/hta-edge-cases/large_integer_trace/* "$data"/hta-edge-cases/cpu_only/*; do
        gzip -dc "$f" >"$out/kineto/$(basename "$f" .gz)"
    done
    gzip -dc "$data"/dlrm-8rank-v100/worker0_* | head -c 60000 >"$out/kineto/dlrm-head.json"
    touch "$out/kineto/.seeded"
fi
status=0
# fuzz NAME ARGS...: run one harness; any finding fails with the reproducer's path.
fuzz() {
    h=$1
    shift
    rc=0
    "$out/fuzz_$h" -error_exitcode=1 -timeout_exitcode=1 -timeout=20 -rss_limit_mb=2048 \
        -artifact_prefix="$out/$h-" "$@" >"$out/$h.log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$h.log" | tail -1)
    if [ $rc != 0 ]; then
        grep -m3 -E 'ERROR|runtime error|SUMMARY|Test unit written' "$out/$h.log" || true
        for a in "$out/$h"-crash-* "$out/$h"-leak-* "$out/$h"-timeout-* "$out/$h"-oom-*; do
            [ -e "$a" ] && echo "fuzz: $h: reproducer $a (keep it in tests/fuzz/corpus/$h/)"
        done
        echo "fuzz: $h: FAILED (exit $rc), log $out/$h.log"
        status=1
    elif [ -n "$execs" ]; then
        echo "fuzz: $h: $execs inputs in ${T:-$S} s, no crash"
    else
        echo "fuzz: $h: $(($# - 1)) kept regression inputs replayed, no crash"
    fi
}
# regression inputs kept from earlier findings: each must run clean
for h in kineto summary flows; do
    set -- "$src/tests/fuzz/corpus/$h"/*
    [ -e "$1" ] && fuzz "$h" -runs=1 "$@"
done
fuzz kineto -max_total_time="$S" -print_final_stats=1 -max_len=65536 "$out/kineto"
fuzz summary -max_total_time="$S" -print_final_stats=1 -max_len=16384 "$out/summary"
SF=$((S / 3)); [ "$SF" -ge 1 ] || SF=1
T=$SF
fuzz flows -max_total_time="$SF" -print_final_stats=1 -max_len=16384 "$out/flows"
exit $status
