#!/bin/sh
# fuzz/run.sh [SECONDS] — build the libFuzzer harnesses with clang (ASan + UBSan) and run
# each for SECONDS (default 60) on a seed corpus: the real traces (decompressed) for the
# Kineto importer, records of a spool for the decoder. Needs clang with libFuzzer
# (Debian: clang, libclang-rt-dev). Not part of `make check`; a crash leaves its input in
# fuzz/out/crash-*, to be turned into a test (tests/import/test_kineto.c test_bad).
set -eu
S=${1:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-$src/fuzz/out}
mkdir -p "$out/kineto" "$out/summary"
command -v clang >/dev/null || { echo "fuzz: no clang; harnesses not built"; exit 77; }
CF="-g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 -D_GNU_SOURCE -I$src -I$src/tracer"
CF="$CF -I${top_builddir:-$src} $(pkg-config --cflags yajl zlib libzstd)"
LIBS="$(pkg-config --libs yajl zlib libzstd) -lpthread -lm"
COMMON="$src/common/types.c $src/common/qsketch.c $src/common/crc32c.c $src/common/wire.c $src/common/wire_summary.c \
 $src/common/jobstore.c $src/common/log.c"
clang $CF -o "$out/fuzz_kineto" "$src/fuzz/fuzz_kineto.c" "$src/analysis/import_kineto.c" \
    "$src/analysis/import_ktab.c" \
    "$src/analysis/import_kfeed.c" "$src/tracer/summarizer.c" "$src/tracer/stepsum.c" \
    "$src/tracer/modes.c" "$src/tracer/collect.c" "$src/tracer/period.c" "$src/tracer/ring.c" \
    $COMMON $LIBS
clang $CF -o "$out/fuzz_summary" "$src/fuzz/fuzz_summary.c" $COMMON $LIBS
data="$src/../shared/data/traces"
if [ -d "$data" ] && [ ! -e "$out/kineto/.seeded" ]; then
    for f in "$data"/hta-edge-cases/large_integer_trace/* "$data"/hta-edge-cases/cpu_only/*; do
        gzip -dc "$f" >"$out/kineto/$(basename "$f" .gz)"
    done
    gzip -dc "$data"/dlrm-8rank-v100/worker0_* | head -c 60000 >"$out/kineto/dlrm-head.json"
    touch "$out/kineto/.seeded"
fi
"$out/fuzz_kineto" -max_total_time="$S" -max_len=65536 -timeout=10 \
    -artifact_prefix="$out/" "$out/kineto" 2>&1 | tail -3
"$out/fuzz_summary" -max_total_time="$S" -max_len=16384 -artifact_prefix="$out/" \
    "$out/summary" 2>&1 | tail -3
